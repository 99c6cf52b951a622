/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* keyring-certified.c's reading of gpg's colon output: which keys an own key certified. The
 * texts are gpg 2.2.40's (Debian 12), captured from a home where Me certified Bob (exportable),
 * Carol (local), and Dan (then revoked that certification), and Other certified Bob. */
#include <stdlib.h>
#include <string.h>

#include "keyring-certified.h"
#include "test.h"

#define ME "9EAE7EF6C415D55B51F87437088D20DB57E417A2"
#define BOB "236FAE6163EC4EDFC4BE116AB7E8224D87E6A992"
#define CAROL "95B179A8551E6BCD34A2B9F57A94AF8366B7A27A"
#define DAN "54005965A69335F33214D50A39787F186AF42D2C"
#define OTHER "7C97BAE3102AFAA0C80F89DEBC18B6F849D3C82A"

static const char fast[] =
        "tru:ot:1:1796537656:1:3:1:5\n"
        "pub::255:22:088D20DB57E417A2:1796537656:1828073656:::::cC:::::ed25519:::0:\n"
        "fpr:::::::::" ME ":\n"
        "uid:-::::1796537656::424FBFC29F347E35752AF4F7283C80354919F4C2::Me <me@x.org>::::::::::0:\n"
        "sig:::22:088D20DB57E417A2:1796537656:::::13x::" ME ":::8:\n"
        "pub::255:22:B7E8224D87E6A992:1796537656:1828073656:::::cC:::::ed25519:::0:\n"
        "fpr:::::::::" BOB ":\n"
        "uid:-::::1796537656::22FE2D5CE8665EDDFFDC3CF40B6EB822EF52EA32::Bob "
        "<bob@x.org>::::::::::0:\n"
        "sig:::22:B7E8224D87E6A992:1796537656:::::13x::" BOB ":::8:\n"
        "sig:::22:088D20DB57E417A2:1796537656:::::10x::" ME ":::8:\n"
        "sig:::22:BC18B6F849D3C82A:1796537657:::::10x::" OTHER ":::8:\n"
        "pub::255:22:7A94AF8366B7A27A:1796537656:1828073656:::::cC:::::ed25519:::0:\n"
        "fpr:::::::::" CAROL ":\n"
        "uid:-::::1796537656::99E4C2C7EB616693D84A95D6DAE3D48A6221C474::Carol "
        "<carol@x.org>::::::::::0:\n"
        "sig:::22:7A94AF8366B7A27A:1796537656:::::13x::" CAROL ":::8:\n"
        "sig:::22:088D20DB57E417A2:1796537656:::::10l::" ME ":::8:\n"
        "pub::255:22:39787F186AF42D2C:1796537656:1828073656:::::cC:::::ed25519:::0:\n"
        "fpr:::::::::" DAN ":\n"
        "uid:-::::1796537656::10387A5ADD0D8C33BD426AD80C47B92E5F23F8E7::Dan "
        "<dan@x.org>::::::::::0:\n"
        "rev:::22:088D20DB57E417A2:1796537657:::::30x,00::" ME ":::8:\n"
        "sig:::22:39787F186AF42D2C:1796537656:::::13x::" DAN ":::8:\n"
        "sig:::22:088D20DB57E417A2:1796537656:::::10x::" ME ":::8:\n"
        "pub::255:22:BC18B6F849D3C82A:1796537656:1828073656:::::cC:::::ed25519:::0:\n"
        "fpr:::::::::" OTHER ":\n"
        "uid:-::::1796537656::CF9F861C8A70F9D461538FCB5ABC0905621839C0::Other "
        "<other@x.org>::::::::::0:\n"
        "sig:::22:BC18B6F849D3C82A:1796537656:::::13x::" OTHER ":::8:\n";

static const char checked[] =
        "tru:ot:1:1796537656:1:3:1:5\n"
        "pub:-:255:22:B7E8224D87E6A992:1796537656:1828073656::u:::cC:::::ed25519:::0:\n"
        "fpr:::::::::" BOB ":\n"
        "uid:-::::1796537656::22FE2D5CE8665EDDFFDC3CF40B6EB822EF52EA32::Bob "
        "<bob@x.org>::::::::::0:\n"
        "sig:!::22:B7E8224D87E6A992:1796537656::::Bob <bob@x.org>:13x::" BOB ":::8:\n"
        "sig:!::22:088D20DB57E417A2:1796537656::::Me <me@x.org>:10x::" ME ":::8:\n"
        "sig:!::22:BC18B6F849D3C82A:1796537657::::Other <other@x.org>:10x::" OTHER ":::8:\n"
        "pub:-:255:22:7A94AF8366B7A27A:1796537656:1828073656::u:::cC:::::ed25519:::0:\n"
        "fpr:::::::::" CAROL ":\n"
        "uid:-::::1796537656::99E4C2C7EB616693D84A95D6DAE3D48A6221C474::Carol "
        "<carol@x.org>::::::::::0:\n"
        "sig:!::22:7A94AF8366B7A27A:1796537656::::Carol <carol@x.org>:13x::" CAROL ":::8:\n"
        "sig:-::22:088D20DB57E417A2:1796537656::::Me <me@x.org>:10l::" ME ":::8:\n";

static const char own[][FPR_HEX_MAX] = { ME };

static struct certified_scan *scan_n(const char *text, size_t n, size_t chunk, bool verified)
{
	struct certified_scan *s = calloc(1, sizeof(*s));

	certified_scan_init(s, own, 1, 1796537700, verified);
	for (size_t i = 0; i < n; i += chunk)
		ASSERT_EQ(certified_scan_feed(s, (const uint8_t *)text + i, MIN(chunk, n - i)), 0);
	certified_scan_finish(s);
	return s;
}

static struct certified_scan *scan(const char *text, size_t chunk, bool verified)
{
	return scan_n(text, strlen(text), chunk, verified);
}

static bool has(const struct certified_scan *s, const char *fpr)
{
	for (size_t i = 0; i < s->n_found; i++)
		if (strcmp(s->found[i].fpr, fpr) == 0)
			return true;
	return false;
}

TEST(gpg_output)
{
	/* Bob (exportable) and Carol (local) are certified; Dan's certification was revoked after
	 * it; Me's self-signature and Other's certification of Bob are not Me's certifications. */
	for (size_t chunk = 1; chunk <= sizeof(fast); chunk = chunk * 3 + 1) {
		struct certified_scan *s = scan(fast, chunk, false);

		ASSERT_EQ(s->n_found, 2u);
		ASSERT_TRUE(has(s, BOB) && has(s, CAROL));
		ASSERT_EQ(s->found[0].when, 1796537656);
		ASSERT_EQ(s->lines.skipped, 0u);
		free(s);
	}
	/* --check-sigs: Carol's certification does not verify ('-'), so only Bob's counts. */
	struct certified_scan *s = scan(checked, 7, true);

	ASSERT_EQ(s->n_found, 1u);
	ASSERT_STREQ(s->found[0].fpr, BOB);
	free(s);
	/* Without '!', nothing in fast output counts as verified. */
	s = scan(fast, 64, true);
	ASSERT_EQ(s->n_found, 0u);
	free(s);
}

TEST(revocations_expiry_issuers)
{
	/* A certification newer than the revocation stands again. */
	struct certified_scan *s = scan("pub::255:22:39787F186AF42D2C:1:::::::\n"
	                                "fpr:::::::::" DAN ":\n"
	                                "uid:-::::1::H::Dan::\n"
	                                "rev:::22:088D20DB57E417A2:1796537657:::::30x::" ME ":\n"
	                                "sig:::22:088D20DB57E417A2:1796537690:::::10x::" ME ":\n",
	                                1000, false);
	ASSERT_EQ(s->n_found, 1u);
	ASSERT_EQ(s->found[0].when, 1796537690);
	free(s);
	/* An expired certification (field 7 before now) does not count; one that expires later
	 * does; the issuer known by key id alone (no field 13) counts; lower case is taken. */
	s = scan("pub::255:22:39787F186AF42D2C:1:::::::\n"
	         "fpr:::::::::" DAN ":\n"
	         "uid:-::::1::H::Dan::\n"
	         "sig:::22:088D20DB57E417A2:1796537600:1796537650::::10x::" ME ":\n"
	         "pub::255:22:B7E8224D87E6A992:1:::::::\n"
	         "fpr:::::::::" BOB ":\n"
	         "uid:-::::1::H::Bob::\n"
	         "sig:::22:088d20db57e417a2:1796537600:1796537999::::12x:\n"
	         "pub::255:22:7A94AF8366B7A27A:1:::::::\n"
	         "fpr:::::::::95b179a8551e6bcd34a2b9f57a94af8366b7a27a:\n"
	         "uid:-::::1::H::Carol::\n"
	         "sig:::22:088D20DB57E417A2:1796537600:::::11x::" ME ":\n",
	         5, false);
	ASSERT_EQ(s->n_found, 2u);
	ASSERT_TRUE(has(s, BOB) && has(s, CAROL));
	free(s);
	/* Signatures on subkeys (bindings), key revocations, classes 0x18/0x1f/0x20, and
	 * certifications before any user id do not certify; the own key itself is never listed. */
	s = scan("pub::255:22:39787F186AF42D2C:1:::::::\n"
	         "fpr:::::::::" DAN ":\n"
	         "sig:::22:088D20DB57E417A2:1796537600:::::10x::" ME ":\n"
	         "uid:-::::1::H::Dan::\n"
	         "sig:::22:088D20DB57E417A2:1796537600:::::1fx::" ME ":\n"
	         "sub::255:18:1111111111111111:1:::::::\n"
	         "sig:::22:088D20DB57E417A2:1796537600:::::18x::" ME ":\n"
	         "rev:::22:088D20DB57E417A2:1796537600:::::20x::" ME ":\n"
	         "pub::255:22:088D20DB57E417A2:1:::::::\n"
	         "fpr:::::::::" ME ":\n"
	         "uid:-::::1::H::Me::\n"
	         "sig:::22:1234567812345678:1796537600:::::10x::" ME ":\n",
	         3, false);
	ASSERT_EQ(s->n_found, 0u);
	free(s);
}

TEST(bounds)
{
	/* More certified keys than CERTIFIED_MAX: the newest are kept. */
	size_t n_keys = CERTIFIED_MAX + 20, len = 0;
	char *text = malloc(n_keys * 256);

	for (size_t i = 0; i < n_keys; i++)
		len += (size_t)sprintf(
		        text + len,
		        "pub::255:22:%016zX:1:::::::\nfpr:::::::::%040zX:\nuid:::::::::x:\n"
		        "sig:::22:088D20DB57E417A2:%zu:::::10x::" ME ":\n",
		        i + 1, i + 1, 1000 + i);
	struct certified_scan *s = scan(text, 4096, false);

	ASSERT_EQ(s->n_found, (size_t)CERTIFIED_MAX);
	for (size_t i = 0; i < s->n_found; i++)
		ASSERT_TRUE(s->found[i].when >= 1020);
	free(s);
	free(text);
	/* A line longer than CERTIFIED_LINE_MAX is skipped, the next one read; so is garbage. */
	static const char head[] =
	        "pub::255:22:39787F186AF42D2C:1:::::::\nfpr:::::::::" DAN ":\nuid:::::::::x:\nuid:";
	static const char tail[] = "\nsig:::22:088D20DB57E417A2:99:::::10x::" ME ":\n"
	                           "sig:::22:088D20DB57E417A2:1e9:::::10x::" ME ":\n"
	                           "\xff\x00:::\n:::::::::::::::::::::::::::::::::\nsig\nsig:";
	char *buf = malloc(sizeof(head) + CERTIFIED_LINE_MAX + 10 + sizeof(tail));

	len = 0;
	memcpy(buf, head, sizeof(head) - 1);
	len += sizeof(head) - 1;
	memset(buf + len, 'x', CERTIFIED_LINE_MAX + 10);
	len += CERTIFIED_LINE_MAX + 10;
	memcpy(buf + len, tail, sizeof(tail) - 1);
	len += sizeof(tail) - 1;
	s = scan_n(buf, len, 100, false);
	ASSERT_EQ(s->lines.skipped, 1u);
	ASSERT_EQ(s->n_found, 1u);
	ASSERT_EQ(s->found[0].when, 99);
	free(s);
	free(buf);
}

int main(void)
{
	RUN(gpg_output);
	RUN(revocations_expiry_issuers);
	RUN(bounds);
	return 0;
}
