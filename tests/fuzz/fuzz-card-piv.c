/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a PIV application answers: any bytes as a certificate object (the 53 wrapper, the inflate
 * bounded at 64 KiB, the certificate by GnuTLS), as a CHUID and as GET METADATA's TLVs. Nothing
 * may crash or read outside the input; a slot's result is 0, -ENOENT or an error with its reason.
 */
#include <errno.h>
#include <string.h>

#include "card-piv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct piv_cert_object o;
	struct piv_metadata m;
	struct piv_cert c = {};
	int64_t expiry = -1;
	int r;

	r = piv_parse_cert_object(data, size, &o);
	if (r == 0 &&
	    (o.cert < data || o.cert_len > size || (size_t)(o.cert - data) > size - o.cert_len))
		__builtin_trap(); /* a certificate outside the answer */
	r = piv_read_cert_answer(data, size, &c);
	if (r < 0 && r != -ENOENT && r != -ENOMEM && !c.error[0])
		__builtin_trap(); /* an error without its reason */
	if (memchr(c.subject, 0, sizeof(c.subject)) == NULL ||
	    memchr(c.error, 0, sizeof(c.error)) == NULL)
		__builtin_trap();
	r = piv_parse_chuid(data, size, &expiry);
	if (r == 0 && (expiry < 0 || expiry > 253402300799LL)) /* 9999-12-31T23:59:59Z */
		__builtin_trap();
	(void)piv_parse_metadata(data, size, &m);
	return 0;
}
