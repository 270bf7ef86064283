# Writes ct.nii and ct.nii.gz (gzip level 6) in the current directory for
# the size table of docs/src/performance/medical.md: python3 cli/tests/medical_sizes.py
# Synthetic CT-like int16 volume (128x128x64): a body ellipse of soft tissue
# with a bright spine-like disc, air outside, small deterministic noise.
# `python3 cli/tests/medical_sizes.py NX NY NZ NAME` writes NAME.nii and
# NAME.nii.gz of another size instead (cli/tests/medical_sizes.sh uses a
# 256x256x128 one for speed).
import struct, random, gzip, sys
random.seed(1)
nx, ny, nz = 128, 128, 64
name = 'ct'
if len(sys.argv) == 5:
    nx, ny, nz, name = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
h = bytearray(352)
struct.pack_into('<i', h, 0, 348)
struct.pack_into('<8h', h, 40, 3, nx, ny, nz, 1, 1, 1, 1)
struct.pack_into('<hhh', h, 70, 4, 16, 0)
struct.pack_into('<8f', h, 76, 1, 0.8, 0.8, 2.0, 1, 1, 1, 1)
struct.pack_into('<f', h, 108, 352)
struct.pack_into('<ff', h, 112, 1.0, -1024.0)
h[123] = 2
struct.pack_into('<hh', h, 252, 1, 1)
struct.pack_into('<12f', h, 280, 0.8,0,0,-51.2, 0,0.8,0,-51.2, 0,0,2.0,-64)
h[344:348] = b'n+1\0'
vals = []
for z in range(nz):
    for y in range(ny):
        for x in range(nx):
            dx, dy = (x - nx / 2) / (nx * 0.4375), (y - ny / 2) / (ny * 0.3125)
            if (x-nx/2)**2 + (y-ny*0.703125)**2 < 100 * (nx / 128)**2: v = 2200
            elif dx*dx + dy*dy < 1: v = 1040 + (z % 7)
            else: v = 24
            vals.append(v + random.randint(-20, 20))
data = struct.pack('<%dh' % len(vals), *vals)
open(name + '.nii', 'wb').write(bytes(h) + data)
open(name + '.nii.gz', 'wb').write(gzip.compress(bytes(h) + data, 6))
