/* san.h: what the tests do differently when built with AddressSanitizer (`make
 * sanitize`, gcc or clang). Only two things, both because ASan changes what is measured,
 * never what is computed:
 * - OCB_TIMEOUT(s): a test's Criterion timeout in seconds. ASan (+UBSan, -O1) runs the
 *   code 2-5x slower and the CLI tests fork sanitized ./ocbench children, so under it
 *   every limit is OCB_SAN_TIMEOUT_X times longer: the margin a limit has over a test's
 *   time in the normal build is kept, and a real hang still ends the test. 0 stays 0
 *   (no limit).
 * - OCB_ASAN: 1 under ASan. Peak RSS then includes ASan's shadow memory (1/8 of what is
 *   touched), redzones and its quarantine of freed blocks (up to 256 MiB by default), so
 *   a measured RSS cannot be compared with computed training memory: such a check is
 *   skipped with cr_skip_test after every other check of its test ran. */
#ifndef OCB_TEST_SAN_H
#define OCB_TEST_SAN_H

#include <criterion/criterion.h>
#include <stdio.h>

#if defined(__SANITIZE_ADDRESS__)
#define OCB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OCB_ASAN 1
#endif
#endif
#ifndef OCB_ASAN
#define OCB_ASAN 0
#endif

#define OCB_SAN_TIMEOUT_X 10
#define OCB_TIMEOUT(s) (OCB_ASAN ? (s) * OCB_SAN_TIMEOUT_X : (s))

/* Under ASan: ends the test here as skipped, naming `what` (a string literal) and why,
 * on stderr too (Criterion prints a skip only with --verbose; cr_log_warn would make the
 * binary exit 1). A check that failed before it still fails the test. Elsewhere nothing. */
#define OCB_SKIP_RSS_UNDER_ASAN(what)                                                       \
	do {                                                                                \
		if (OCB_ASAN) {                                                             \
			fprintf(stderr, "[SKIP] %s: %s\n", what, OCB_ASAN_RSS_WHY);        \
			cr_skip_test("%s: %s", what, OCB_ASAN_RSS_WHY);                     \
		}                                                                           \
	} while (0)
#define OCB_ASAN_RSS_WHY                                                                    \
	"ASan build: peak RSS holds its shadow memory, redzones and quarantine, not "        \
	"comparable with computed training memory (checked in make check)"

#endif
