#include "ocb_natcmp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Length of the number starting at s[i] (< n), 0 if none starts there. */
static size_t num_len(const char *s, size_t i, size_t n)
{
	size_t k = i;
	if (s[k] == '-') {
		int sign_ok = i == 0 || strchr(":,[{\"/= ", s[i - 1]) != NULL;
		if (!sign_ok || k + 1 >= n || !isdigit((unsigned char)s[k + 1]))
			return 0;
		k++;
	}
	if (k >= n || !isdigit((unsigned char)s[k]))
		return 0;
	/* a digit run inside a word ("q4_0", "x86") is still compared by value */
	while (k < n && isdigit((unsigned char)s[k]))
		k++;
	if (k + 1 < n && s[k] == '.' && isdigit((unsigned char)s[k + 1])) {
		k++;
		while (k < n && isdigit((unsigned char)s[k]))
			k++;
	}
	if (k + 1 < n && (s[k] == 'e' || s[k] == 'E')) {
		size_t e = k + 1;
		if (e < n && (s[e] == '+' || s[e] == '-'))
			e++;
		if (e < n && isdigit((unsigned char)s[e])) {
			while (e < n && isdigit((unsigned char)s[e]))
				e++;
			k = e;
		}
	}
	return k - i;
}

static double num_val(const char *s, size_t len)
{
	char buf[64];
	if (len >= sizeof buf)
		len = sizeof buf - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return strtod(buf, NULL);
}

int ocb_natcmp_n(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0;
	while (i < na && j < nb) {
		size_t la = num_len(a, i, na), lb = la ? num_len(b, j, nb) : 0;
		if (la && lb) {
			double x = num_val(a + i, la), y = num_val(b + j, lb);
			if (x != y)
				return x < y ? -1 : 1;
			i += la;
			j += lb;
			continue;
		}
		unsigned char ca = (unsigned char)a[i], cb = (unsigned char)b[j];
		if (ca != cb)
			return ca < cb ? -1 : 1;
		i++;
		j++;
	}
	if (i < na || j < nb)
		return i < na ? 1 : -1;
	/* equal by value: fall back to the bytes so that only identical strings tie */
	size_t m = na < nb ? na : nb;
	int c = memcmp(a, b, m);
	if (c)
		return c < 0 ? -1 : 1;
	return na == nb ? 0 : na < nb ? -1 : 1;
}

int ocb_natcmp(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : b ? -1 : 0;
	return ocb_natcmp_n(a, strlen(a), b, strlen(b));
}
