#!/usr/bin/env bash
# Fetches cfgrib's GRIB samples (tests/sample-data in its sdist: real files
# from ECMWF, DWD, NCEP and the UK Met Office, among them the ERA5 files the
# README's measurements use) with pip into DIR, once, and extracts them
# there; prints nothing. The weather tests of the weather, python and
# kerchunk stages find them through TGM_CFGRIB_SAMPLES=DIR and skip with a
# message when they are absent (no network).
#
#   .ci/cfgrib-samples.sh PYTHON DIR
set -euo pipefail
py="$1"
dir="$2"
version=0.9.15.1
files=(alternate-scanning.grib cams-egg4-monthly.grib cfrzr_and_cprat.grib
    cfrzr_and_cprat_0s.grib ds.waveh.5.grib era5-levels-corrupted.grib
    era5-levels-members.grib era5-single-level-scalar-time.grib
    fields_with_missing_values.grib forecast_monthly_ukmo.grib hpa_and_pa.grib
    lambert_grid.grib multi_param_on_multi_dims.grib ncep-seasonal-monthly.grib
    reduced_gg.grib regular_gg_ml.grib regular_gg_ml_g2.grib regular_gg_pl.grib
    regular_gg_sfc.grib regular_gg_wrong_increment.grib regular_ll_msl.grib
    regular_ll_sfc.grib regular_ll_wrong_increment.grib scanning_mode_64.grib
    single_gridpoint.grib soil-surface-level-mix.grib spherical_harmonics.grib
    step_60m.grib t_analysis_and_fc_0.grib t_on_different_level_types.grib
    tp_on_different_grid_resolutions.grib uv_on_different_levels.grib)
mkdir -p "$dir"
have=1
for f in "${files[@]}"; do [ -s "$dir/$f" ] || have=0; done
[ "$have" = 1 ] && exit 0
sdist="$dir/cfgrib-$version.tar.gz"
if [ ! -e "$sdist" ] && ! "$py" -m pip download -q --no-deps --no-binary :all: "cfgrib==$version" -d "$dir"; then
    echo "cfgrib $version not fetched from PyPI: the tests of its samples will skip" >&2
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$sdist" -C "$tmp" "${files[@]/#/cfgrib-$version/tests/sample-data/}"
for f in "${files[@]}"; do mv "$tmp/cfgrib-$version/tests/sample-data/$f" "$dir/$f.part" && mv "$dir/$f.part" "$dir/$f"; done
rm -f "$sdist"
