/* Assertion helpers shared by the C and C++ test programs. */
#ifndef TGM_TEST_CHECK_H
#define TGM_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensogram.h"

static int check_failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n",      \
                    __FILE__, __LINE__, #cond,                                 \
                    tgm_last_error() ? tgm_last_error() : "none");             \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

/* The call returned `code` and, for a failure, left a last-error text
 * containing `needle`. */
#define CHECK_CODE(call, code, needle)                                         \
    do {                                                                       \
        tgm_error rc_ = (call);                                                \
        if (rc_ != (code)) {                                                   \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d; last error: %s\n", \
                    __FILE__, __LINE__, #call, (int)rc_, tgm_error_string(rc_), \
                    (int)(code), tgm_last_error() ? tgm_last_error() : "none"); \
            check_failures++;                                                  \
        } else if ((code) != TGM_ERROR_OK) {                                   \
            const char *e_ = tgm_last_error();                                 \
            if (e_ == NULL || strstr(e_, (needle)) == NULL) {                  \
                fprintf(stderr, "%s:%d: last error of %s is \"%s\", expected it to mention \"%s\"\n", \
                        __FILE__, __LINE__, #call, e_ ? e_ : "(null)", (needle)); \
                check_failures++;                                              \
            }                                                                  \
        }                                                                      \
    } while (0)

#define CHECK_OK(call) CHECK_CODE(call, TGM_ERROR_OK, "")

#define CHECK_STR(got, want)                                                   \
    do {                                                                       \
        const char *g_ = (got);                                                \
        if (g_ == NULL || strcmp(g_, (want)) != 0) {                           \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n",          \
                    __FILE__, __LINE__, #got, g_ ? g_ : "(null)", (want));     \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

static int check_report(const char *program) {
    if (check_failures != 0) {
        fprintf(stderr, "%s: %d check(s) failed\n", program, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", program);
    return 0;
}

#endif
