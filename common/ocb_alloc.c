#include "ocb_alloc.h"
#include "ocb_error.h"

#include <stdlib.h>
#include <string.h>

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
