/* Runs cases of testdata/metadata_lookup.json through the C API, as
 * ffi/tests/c_programs.rs hands them over:
 *
 *   metadata_table N METADATA_JSON [SCOPE PATH]...
 *
 * encodes N one-byte uint8 objects with METADATA_JSON (the case's caller
 * map with "descriptors" added), reads the message's metadata back, and
 * prints one line per lookup: the value found as JSON, or `absent`.
 * SCOPE is `message` (tgm_metadata_get) or `object:I`
 * (tgm_metadata_get_at). When encoding fails it prints one line
 * `error CODE LAST_ERROR` instead. Exits non-zero only on misuse. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensogram.h"

static void print_string(const char *s, size_t n) {
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* Prints `v` as JSON. */
static void print_value(const tgm_value_t *v) {
    size_t n = 0;
    switch (tgm_value_get_type(v)) {
    case TGM_VALUE_TYPE_NULL:
        fputs("null", stdout);
        break;
    case TGM_VALUE_TYPE_BOOL: {
        bool b = false;
        tgm_value_as_bool(v, &b);
        fputs(b ? "true" : "false", stdout);
        break;
    }
    case TGM_VALUE_TYPE_INT: {
        int64_t i = 0;
        uint64_t u = 0;
        if (tgm_value_as_i64(v, &i))
            printf("%lld", (long long)i);
        else if (tgm_value_as_u64(v, &u))
            printf("%llu", (unsigned long long)u);
        else
            fputs("\"<integer out of range>\"", stdout);
        break;
    }
    case TGM_VALUE_TYPE_FLOAT: {
        double f = 0;
        tgm_value_as_f64(v, &f);
        printf("%.17g", f);
        break;
    }
    case TGM_VALUE_TYPE_STRING: {
        const char *s = tgm_value_as_string(v, &n);
        print_string(s, n);
        break;
    }
    case TGM_VALUE_TYPE_BYTES:
        fputs("\"<bytes>\"", stdout);
        break;
    case TGM_VALUE_TYPE_ARRAY:
        putchar('[');
        for (size_t i = 0; i < tgm_value_array_len(v); i++) {
            if (i) putchar(',');
            print_value(tgm_value_array_get(v, i));
        }
        putchar(']');
        break;
    case TGM_VALUE_TYPE_MAP:
        putchar('{');
        for (size_t i = 0; i < tgm_value_map_len(v); i++) {
            if (i) putchar(',');
            const char *k = tgm_value_map_key_at(v, i, &n);
            print_string(k, n);
            putchar(':');
            print_value(tgm_value_map_value_at(v, i));
        }
        putchar('}');
        break;
    }
}

int main(int argc, char **argv) {
    if (argc < 3 || argc % 2 != 1) {
        fprintf(stderr, "usage: %s N METADATA_JSON [SCOPE PATH]...\n", argv[0]);
        return 2;
    }
    size_t n = (size_t)strtoul(argv[1], NULL, 10);
    uint8_t *bytes = calloc(n ? n : 1, 1);
    const uint8_t **ptrs = calloc(n ? n : 1, sizeof *ptrs);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    if (!bytes || !ptrs || !lens) return 2;
    for (size_t i = 0; i < n; i++) {
        ptrs[i] = bytes + i;
        lens[i] = 1;
    }
    tgm_bytes_t msg = {NULL, 0};
    tgm_error rc = tgm_encode(argv[2], ptrs, lens, n, NULL, 0, &msg);
    free(bytes);
    free(ptrs);
    free(lens);
    if (rc != TGM_ERROR_OK) {
        printf("error %d %s\n", (int)rc, tgm_last_error() ? tgm_last_error() : "");
        return 0;
    }
    tgm_metadata_t *meta = NULL;
    rc = tgm_decode_metadata(msg.data, msg.len, &meta);
    tgm_bytes_free(msg);
    if (rc != TGM_ERROR_OK) {
        fprintf(stderr, "decode_metadata: %s\n", tgm_last_error());
        return 2;
    }
    for (int a = 3; a + 1 < argc; a += 2) {
        const char *scope = argv[a], *path = argv[a + 1];
        const tgm_value_t *v = NULL;
        if (strcmp(scope, "message") == 0) {
            v = tgm_metadata_get(meta, path);
            if ((v != NULL) != tgm_metadata_has(meta, path)) {
                fprintf(stderr, "tgm_metadata_has disagrees on %s\n", path);
                return 2;
            }
        } else if (strncmp(scope, "object:", 7) == 0) {
            size_t i = (size_t)strtoul(scope + 7, NULL, 10);
            v = tgm_metadata_get_at(meta, i, path);
            if ((v != NULL) != tgm_metadata_has_at(meta, i, path)) {
                fprintf(stderr, "tgm_metadata_has_at disagrees on %s\n", path);
                return 2;
            }
        } else {
            fprintf(stderr, "unknown scope %s\n", scope);
            return 2;
        }
        if (v)
            print_value(v);
        else
            fputs("absent", stdout);
        putchar('\n');
    }
    tgm_metadata_free(meta);
    return 0;
}
