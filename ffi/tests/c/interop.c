/* The interchange file of the round-trip tests, read or written through the
 * C API. Two messages:
 *   0: float64 [3,4] (v[i] = i/2 - 1, no pipeline) and uint16 [5] (lz4);
 *      base[0].mars = {param: "2t", step: 12}, base[1].mars.param = "lsm";
 *      _extra_.origin names the writer.
 *   1: float64 [100] (v[i] = 270.25 + 10 sin(i/10)), simple_packing at
 *      16 bits; base[0].name = "packed".
 * Usage: interop check FILE ORIGIN | interop write FILE */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const uint16_t U16[5] = {1, 2, 300, 4000, 65535};

static double grid(size_t i) { return (double)i / 2.0 - 1.0; }
static double field(size_t i) { return 270.25 + 10.0 * sin((double)i / 10.0); }

static int check(const char *path, const char *origin) {
    tgm_file_t *f = NULL;
    CHECK_OK(tgm_file_open(path, &f));
    if (f == NULL) return 1;
    size_t n = 0;
    CHECK_OK(tgm_file_message_count(f, &n));
    CHECK(n == 2);

    tgm_message_t *m = NULL;
    CHECK_OK(tgm_file_decode_message(f, 0, 1, 0, 1, &m));
    CHECK(tgm_message_num_objects(m) == 2);
    CHECK_STR(tgm_object_dtype(m, 0), "float64");
    const uint64_t *shape = tgm_object_shape(m, 0);
    CHECK(tgm_object_ndim(m, 0) == 2 && shape && shape[0] == 3 && shape[1] == 4);
    size_t len = 0;
    const double *g = (const double *)tgm_object_data(m, 0, &len);
    CHECK(g && len == 12 * sizeof(double));
    for (size_t i = 0; g && i < 12; i++) CHECK(g[i] == grid(i));
    CHECK_STR(tgm_object_dtype(m, 1), "uint16");
    CHECK_STR(tgm_object_compression(m, 1), "lz4");
    const uint8_t *u = tgm_object_data(m, 1, &len);
    CHECK(u && len == sizeof U16 && memcmp(u, U16, len) == 0);
    tgm_metadata_t *meta = NULL;
    CHECK_OK(tgm_message_metadata(m, &meta));
    CHECK_STR(tgm_metadata_get_string_at(meta, 0, "mars.param"), "2t");
    CHECK(tgm_metadata_get_int_at(meta, 0, "mars.step", -1) == 12);
    CHECK_STR(tgm_metadata_get_string_at(meta, 1, "mars.param"), "lsm");
    CHECK_STR(tgm_metadata_get_string(meta, "origin"), origin);
    tgm_metadata_free(meta);
    tgm_message_free(m);

    CHECK_OK(tgm_file_decode_message(f, 1, 1, 0, 1, &m));
    CHECK_STR(tgm_payload_encoding(m, 0), "simple_packing");
    const double *p = (const double *)tgm_object_data(m, 0, &len);
    CHECK(p && len == 100 * sizeof(double));
    for (size_t i = 0; p && i < 100; i++) CHECK(fabs(p[i] - field(i)) < 1e-3);
    CHECK_OK(tgm_message_metadata(m, &meta));
    CHECK_STR(tgm_metadata_get_string_at(meta, 0, "name"), "packed");
    tgm_metadata_free(meta);
    tgm_message_free(m);
    tgm_file_close(f);
    return check_report("interop check");
}

static int write_file(const char *path) {
    double g[12], v[100];
    for (size_t i = 0; i < 12; i++) g[i] = grid(i);
    for (size_t i = 0; i < 100; i++) v[i] = field(i);
    tgm_file_t *f = NULL;
    CHECK_OK(tgm_file_create(path, &f));
    if (f == NULL) return 1;
    const char *meta0 =
        "{\"descriptors\":["
        "{\"type\":\"ntensor\",\"ndim\":2,\"shape\":[3,4],\"strides\":[4,1],\"dtype\":\"float64\","
        "\"encoding\":\"none\",\"filter\":\"none\",\"compression\":\"none\"},"
        "{\"type\":\"ntensor\",\"ndim\":1,\"shape\":[5],\"strides\":[1],\"dtype\":\"uint16\","
        "\"encoding\":\"none\",\"filter\":\"none\",\"compression\":\"lz4\"}],"
        "\"base\":[{\"mars\":{\"param\":\"2t\",\"step\":12}},{\"mars\":{\"param\":\"lsm\"}}],"
        "\"origin\":\"c\"}";
    const uint8_t *ptrs0[2] = {(const uint8_t *)g, (const uint8_t *)U16};
    const size_t lens0[2] = {sizeof g, sizeof U16};
    CHECK_OK(tgm_file_append(f, meta0, ptrs0, lens0, 2, "xxh3", 0));

    double ref = 0;
    int32_t e = 0;
    CHECK_OK(tgm_simple_packing_compute_params(v, 100, 16, 0, &ref, &e));
    char meta1[1024];
    snprintf(meta1, sizeof meta1,
             "{\"descriptors\":[{\"type\":\"ntensor\",\"ndim\":1,\"shape\":[100],\"strides\":[1],"
             "\"dtype\":\"float64\",\"encoding\":\"simple_packing\",\"filter\":\"none\","
             "\"compression\":\"none\",\"sp_bits_per_value\":16,\"sp_reference_value\":%.17e,"
             "\"sp_binary_scale_factor\":%d,\"sp_decimal_scale_factor\":0}],"
             "\"base\":[{\"name\":\"packed\"}]}",
             ref, (int)e);
    const uint8_t *ptrs1[1] = {(const uint8_t *)v};
    const size_t lens1[1] = {sizeof v};
    CHECK_OK(tgm_file_append(f, meta1, ptrs1, lens1, 1, "xxh3", 0));
    tgm_file_close(f);
    return check_report("interop write");
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "check") == 0) return check(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "write") == 0) return write_file(argv[2]);
    fprintf(stderr, "usage: %s check FILE ORIGIN | %s write FILE\n", argv[0], argv[0]);
    return 2;
}
