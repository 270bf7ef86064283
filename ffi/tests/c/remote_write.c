/* A new archive written to an S3 bucket through tgm_writer_t.
 * Usage: remote_write ENDPOINT KEY SECRET NEW_URL EXISTING_URL DROPPED_URL
 * Prints the ETag of the object written; the test around it checks what
 * the bucket holds. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"

static const char *META =
    "{\"descriptors\":[{\"type\":\"ntensor\",\"ndim\":1,\"shape\":[4],"
    "\"strides\":[1],\"dtype\":\"float64\",\"encoding\":\"none\","
    "\"filter\":\"none\",\"compression\":\"none\"}],"
    "\"base\":[{\"name\":\"c\"}]}";

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s ENDPOINT KEY SECRET NEW_URL EXISTING_URL DROPPED_URL\n", argv[0]);
        return 2;
    }
    char opts[1024];
    snprintf(opts, sizeof opts,
             "{\"endpoint\":\"%s\",\"allow_http\":true,\"region\":\"us-east-1\","
             "\"access_key_id\":\"%s\",\"secret_access_key\":\"%s\"}",
             argv[1], argv[2], argv[3]);
    double values[4] = {1.0, 2.0, 3.0, 4.0};
    const uint8_t *ptrs[1] = {(const uint8_t *)values};
    const size_t lens[1] = {sizeof values};

    tgm_writer_t *w = NULL;
    CHECK_OK(tgm_writer_create(argv[4], opts, false, &w));
    for (int i = 0; i < 3; i++) {
        values[0] = i;
        CHECK_OK(tgm_writer_append(w, META, ptrs, lens, 1, "xxh3", 0));
    }
    CHECK_OK(tgm_writer_finish(w));
    CHECK(tgm_writer_etag(w) != NULL);
    CHECK(tgm_writer_bytes(w) > 0);
    printf("etag %s bytes %llu\n", tgm_writer_etag(w) ? tgm_writer_etag(w) : "(none)",
           (unsigned long long)tgm_writer_bytes(w));
    tgm_writer_free(w);

    w = NULL;
    CHECK_CODE(tgm_writer_create(argv[5], opts, false, &w), TGM_ERROR_IO, "already exists");
    CHECK(w == NULL);

    CHECK_OK(tgm_writer_create(argv[6], opts, false, &w));
    CHECK_OK(tgm_writer_append(w, META, ptrs, lens, 1, "xxh3", 0));
    tgm_writer_free(w);
    return check_report("remote_write");
}
