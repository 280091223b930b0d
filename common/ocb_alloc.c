#include "ocb_alloc.h"
#include "ocb_error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define OCB_HUGE_PAGE ((size_t)2 << 20)

void *ocb_alloc(size_t bytes)
{
	void *p = NULL;
	if (bytes == 0)
		return NULL;
	bytes = ocb_round_up(bytes, OCB_ALIGN);
	if (posix_memalign(&p, OCB_ALIGN, bytes) != 0) {
		ocb_seterr(OCB_ENOMEM, "cannot allocate %zu bytes", bytes);
		return NULL;
	}
	memset(p, 0, bytes);
	return p;
}

void ocb_free(void *p)
{
	free(p);
}

void *ocb_alloc_untouched(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, OCB_ALIGN, ocb_round_up(bytes, OCB_ALIGN)) != 0) {
		ocb_seterr(OCB_ENOMEM, "cannot allocate %zu bytes", bytes);
		return NULL;
	}
	return p;
}

void *ocb_alloc_huge(size_t bytes)
{
	void *p = NULL;
	size_t n = ocb_round_up(bytes, OCB_HUGE_PAGE);
	if (bytes == 0 || posix_memalign(&p, OCB_HUGE_PAGE, n) != 0) {
		ocb_seterr(OCB_ENOMEM, "cannot allocate %zu bytes", bytes);
		return NULL;
	}
#ifdef MADV_HUGEPAGE
	const char *no = getenv("OCB_NO_THP");
	if (!(no && *no && *no != '0'))
		madvise(p, n, MADV_HUGEPAGE); /* a refusal is not an error */
#endif
	return p;
}
