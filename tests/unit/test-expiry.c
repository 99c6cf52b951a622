/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Expiry levels, threshold crossings, the next deadline and the words a user reads ("in 6
 * days"), with an injected clock. Also runs the sd-event timer once against the real clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config.h"
#include "expiry.h"
#include "test.h"

#define DAY SECONDS_PER_DAY
/* 2026-12-03 00:00:00 UTC */
#define NOW INT64_C(1796256000)

static struct config cfg;

static struct subkey sub(unsigned caps, int64_t expires)
{
	struct subkey s;

	memset(&s, 0, sizeof(s));
	s.capabilities = caps;
	s.expires = expires;
	return s;
}

TEST(days_left)
{
	ASSERT_EQ(expiry_days_left(NOW + 6 * DAY, NOW), 6);
	ASSERT_EQ(expiry_days_left(NOW + 6 * DAY - 1, NOW), 6);
	ASSERT_EQ(expiry_days_left(NOW + 6 * DAY + 1, NOW), 7);
	ASSERT_EQ(expiry_days_left(NOW + 1, NOW), 1);
	ASSERT_EQ(expiry_days_left(NOW, NOW), 0);
	ASSERT_EQ(expiry_days_left(NOW - 3 * DAY, NOW), -3);
}

TEST(format)
{
	char buf[EXPIRY_TEXT_MAX];

	ASSERT_STREQ(expiry_format_relative(buf, sizeof(buf), NOW + 6 * DAY, NOW), "in 6 days");
	ASSERT_STREQ(expiry_format_relative(buf, sizeof(buf), NOW + 60, NOW), "in 1 day");
	ASSERT_STREQ(expiry_format_relative(buf, sizeof(buf), NOW - 60, NOW), "expired today");
	ASSERT_STREQ(expiry_format_relative(buf, sizeof(buf), NOW - DAY, NOW), "expired 1 day ago");
	ASSERT_STREQ(expiry_format_relative(buf, sizeof(buf), NOW - 3 * DAY - 5, NOW),
	             "expired 3 days ago");
	ASSERT_STREQ(expiry_format_relative(buf, sizeof(buf), 0, NOW), "never");
	ASSERT_STREQ(expiry_format_date(buf, sizeof(buf), NOW + 6 * DAY), "2026-12-09");
	ASSERT_STREQ(expiry_format_date(buf, sizeof(buf), 0), "never");
}

TEST(levels)
{
	struct expiry_policy p = expiry_policy_from_config(&cfg);

	/* Defaults: thresholds 30 14 7 3 1, warning 14, critical 3. */
	ASSERT_EQ(expiry_level(&p, 0, false, NOW), LEVEL_OK);
	ASSERT_EQ(expiry_level(&p, NOW + 31 * DAY, false, NOW), LEVEL_OK);
	ASSERT_EQ(expiry_level(&p, NOW + 30 * DAY + 1, false, NOW), LEVEL_OK);
	ASSERT_EQ(expiry_level(&p, NOW + 30 * DAY, false, NOW), LEVEL_NOTICE);
	ASSERT_EQ(expiry_level(&p, NOW + 14 * DAY + 1, false, NOW), LEVEL_NOTICE);
	ASSERT_EQ(expiry_level(&p, NOW + 14 * DAY, false, NOW), LEVEL_WARNING);
	ASSERT_EQ(expiry_level(&p, NOW + 3 * DAY + 1, false, NOW), LEVEL_WARNING);
	ASSERT_EQ(expiry_level(&p, NOW + 3 * DAY, false, NOW), LEVEL_CRITICAL);
	ASSERT_EQ(expiry_level(&p, NOW + 1, false, NOW), LEVEL_CRITICAL);
	ASSERT_EQ(expiry_level(&p, NOW, false, NOW), LEVEL_EXPIRED);
	/* gpg's flag wins even when the date says otherwise (e.g. clock skew). */
	ASSERT_EQ(expiry_level(&p, NOW + 100 * DAY, true, NOW), LEVEL_EXPIRED);
}

TEST(threshold_crossed)
{
	struct expiry_policy p = expiry_policy_from_config(&cfg);

	ASSERT_ERR(expiry_threshold_crossed(&p, NOW + 31 * DAY, NOW), ENOENT);
	ASSERT_EQ(expiry_threshold_crossed(&p, NOW + 30 * DAY, NOW), 30);
	ASSERT_EQ(expiry_threshold_crossed(&p, NOW + 8 * DAY, NOW), 14);
	ASSERT_EQ(expiry_threshold_crossed(&p, NOW + 6 * DAY, NOW), 7);
	ASSERT_EQ(expiry_threshold_crossed(&p, NOW + 1, NOW), 1);
	ASSERT_ERR(expiry_threshold_crossed(&p, NOW, NOW), ENOENT);
	ASSERT_ERR(expiry_threshold_crossed(&p, 0, NOW), ENOENT);
}

TEST(next_change)
{
	struct expiry_policy p = expiry_policy_from_config(&cfg);
	int64_t e = NOW + 10 * DAY;

	ASSERT_EQ(expiry_next_change(&p, 0, NOW), 0);
	ASSERT_EQ(expiry_next_change(&p, NOW - 1, NOW), 0);
	/* 10 days left: next is the 7-day threshold, then 3, 1, expiry. */
	ASSERT_EQ(expiry_next_change(&p, e, NOW), e - 7 * DAY);
	ASSERT_EQ(expiry_next_change(&p, e, e - 7 * DAY), e - 3 * DAY);
	ASSERT_EQ(expiry_next_change(&p, e, e - 1 * DAY), e);
	ASSERT_EQ(expiry_next_change(&p, e, e), 0);
	/* A warning_days that is not among the thresholds still wakes us. */
	{
		struct config c2 = cfg;
		struct expiry_policy p2;

		c2.warning_days = 9;
		p2 = expiry_policy_from_config(&c2);
		ASSERT_EQ(expiry_next_change(&p2, e, NOW), e - 9 * DAY);
		ASSERT_EQ(expiry_level(&p2, e, false, e - 9 * DAY), LEVEL_WARNING);
	}
}

TEST(apply)
{
	struct subkey subs[4];
	struct key keys[2];
	int64_t next;

	memset(keys, 0, sizeof(keys));
	/* Key 0: primary never expires; old encryption subkey expired, a successor valid for a
	 * year; signing subkey expiring in 5 days. */
	subs[0] = sub(CAP_CERTIFY, 0);
	subs[0].is_primary = true;
	subs[1] = sub(CAP_ENCRYPT, NOW - 100 * DAY);
	subs[1].expired = true;
	subs[2] = sub(CAP_ENCRYPT, NOW + 365 * DAY);
	subs[3] = sub(CAP_SIGN, NOW + 5 * DAY);
	keys[0].subkeys = subs;
	keys[0].n_subkeys = 4;

	next = expiry_apply(keys, 1, &cfg, NOW);
	ASSERT_EQ(subs[0].level, LEVEL_OK);
	ASSERT_EQ(subs[1].level, LEVEL_EXPIRED);
	ASSERT_EQ(subs[2].level, LEVEL_OK);
	ASSERT_EQ(subs[3].level, LEVEL_WARNING);
	/* The replaced encryption subkey does not count; the signing one does. */
	ASSERT_EQ(keys[0].level, LEVEL_WARNING);
	ASSERT_EQ(next, NOW + 5 * DAY - 3 * DAY);
	ASSERT_EQ(expiry_subkey_threshold(&subs[3], &cfg, NOW), 7);

	/* Without the successor the key is expired. */
	subs[2].revoked = true;
	expiry_apply(keys, 1, &cfg, NOW);
	ASSERT_EQ(keys[0].level, LEVEL_EXPIRED);

	/* A revoked key is not an expiry problem. */
	keys[0].revoked = true;
	expiry_apply(keys, 1, &cfg, NOW);
	ASSERT_EQ(keys[0].level, LEVEL_OK);

	/* An expired primary expires the key, whatever the subkeys say. */
	{
		struct subkey s2[2] = { sub(CAP_CERTIFY | CAP_SIGN, NOW - 1), sub(CAP_ENCRYPT, 0) };

		keys[1].subkeys = s2;
		keys[1].n_subkeys = 2;
		ASSERT_EQ(expiry_apply(&keys[1], 1, &cfg, NOW), 0);
		ASSERT_EQ(keys[1].level, LEVEL_EXPIRED);
	}
}

/* A key of rotated subkeys: the primary (never expires) and n subkeys, the i-th created i days
 * after the primary, each named "000...0i" so that replaced_by can be checked. */
static void rotated(struct key *k, struct subkey *subs, size_t n)
{
	memset(k, 0, sizeof(*k));
	strcpy(k->fingerprint, "C26E5BD792EB8F4EC1606B68B82E9F4BA59A4309");
	subs[0] = sub(CAP_CERTIFY, 0);
	subs[0].is_primary = true;
	subs[0].created = NOW - 1000 * DAY;
	for (size_t i = 1; i < n; i++)
		snprintf(subs[i].fingerprint, sizeof(subs[i].fingerprint), "%040zu", i);
	k->subkeys = subs;
	k->n_subkeys = n;
}

static void rotation(struct subkey *s, unsigned caps, int64_t created, int64_t expires)
{
	char fpr[FPR_HEX_MAX];

	strcpy(fpr, s->fingerprint);
	*s = sub(caps, expires);
	strcpy(s->fingerprint, fpr);
	s->created = created;
	s->expired = expires != 0 && expires <= NOW;
}

TEST(replaced)
{
	struct subkey subs[4];
	struct key k;

	/* Replaced before its expiry: an encryption subkey due in 5 days, a 1-year one since. */
	rotated(&k, subs, 3);
	rotation(&subs[1], CAP_ENCRYPT, NOW - 360 * DAY, NOW + 5 * DAY);
	rotation(&subs[2], CAP_ENCRYPT, NOW - 1 * DAY, NOW + 365 * DAY);
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].expiry_level, LEVEL_WARNING);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_STREQ(subs[1].replaced_by, subs[2].fingerprint);
	ASSERT_STREQ(subs[2].replaced_by, "");
	ASSERT_EQ(k.level, LEVEL_OK);

	/* Replaced after its expiry: the old signing subkey expired 10 days ago. */
	rotation(&subs[1], CAP_SIGN, NOW - 400 * DAY, NOW - 10 * DAY);
	rotation(&subs[2], CAP_SIGN, NOW - 20 * DAY, NOW + 90 * DAY);
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].expiry_level, LEVEL_EXPIRED);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_STREQ(subs[1].replaced_by, subs[2].fingerprint);
	ASSERT_EQ(k.level, LEVEL_OK);

	/* The replacement itself expiring: it counts, the old one does not. */
	subs[2].expires = NOW + 5 * DAY;
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(subs[2].level, LEVEL_WARNING);
	ASSERT_EQ(k.level, LEVEL_WARNING);
	/* ... and once it has expired too, nothing replaces the old one any more. */
	expiry_apply(&k, 1, &cfg, NOW + 6 * DAY);
	ASSERT_STREQ(subs[1].replaced_by, "");
	ASSERT_EQ(subs[1].level, LEVEL_EXPIRED);
	ASSERT_EQ(k.level, LEVEL_EXPIRED);

	/* Not a replacement: newer but expiring sooner; or expiring later but older. */
	rotation(&subs[1], CAP_SIGN, NOW - 30 * DAY, NOW + 5 * DAY);
	rotation(&subs[2], CAP_SIGN, NOW - 20 * DAY, NOW + 2 * DAY);
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_STREQ(subs[1].replaced_by, "");
	ASSERT_STREQ(subs[2].replaced_by, "");
	ASSERT_EQ(subs[1].level, LEVEL_WARNING);
	/* Another use does not replace. */
	rotation(&subs[2], CAP_ENCRYPT, NOW - 20 * DAY, NOW + 365 * DAY);
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_STREQ(subs[1].replaced_by, "");
	ASSERT_EQ(k.level, LEVEL_WARNING);
}

TEST(two_rotations)
{
	struct subkey subs[4];
	struct key k;

	rotated(&k, subs, 4);
	rotation(&subs[1], CAP_SIGN, NOW - 700 * DAY, NOW - 340 * DAY);
	rotation(&subs[2], CAP_SIGN, NOW - 350 * DAY, NOW - 2 * DAY);
	rotation(&subs[3], CAP_SIGN, NOW - 5 * DAY, NOW + 360 * DAY);
	expiry_apply(&k, 1, &cfg, NOW);
	/* Both old ones name the one in use now. */
	ASSERT_STREQ(subs[1].replaced_by, subs[3].fingerprint);
	ASSERT_STREQ(subs[2].replaced_by, subs[3].fingerprint);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(subs[2].level, LEVEL_OK);
	ASSERT_EQ(k.level, LEVEL_OK);
}

TEST(replacement_not_on_card)
{
	struct subkey subs[3];
	struct key k;

	/* The old signing subkey on the card the user carries (A), its replacement on the backup
	 * card (B) only: the card still signs with the old one. */
	rotated(&k, subs, 3);
	rotation(&subs[1], CAP_SIGN, NOW - 360 * DAY, NOW + 5 * DAY);
	rotation(&subs[2], CAP_SIGN, NOW - 1 * DAY, NOW + 365 * DAY);
	subs[1].secret = subs[2].secret = SECRET_CARD;
	strcpy(subs[1].card_serial, "D2760001240103040006123456780000");
	strcpy(subs[2].card_serial, "D2760001240103040006876543210000");
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_STREQ(subs[1].replaced_by, subs[2].fingerprint);
	ASSERT_EQ(subs[1].level, LEVEL_WARNING);
	ASSERT_EQ(k.level, LEVEL_WARNING);
	/* Expired, it is still a warning, not critical. */
	rotation(&subs[1], CAP_SIGN, NOW - 360 * DAY, NOW - 1 * DAY);
	subs[1].secret = SECRET_CARD;
	strcpy(subs[1].card_serial, "D2760001240103040006123456780000");
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_WARNING);
	ASSERT_EQ(k.level, LEVEL_WARNING);
	/* On disk only: the same. */
	subs[2].secret = SECRET_DISK;
	subs[2].card_serial[0] = 0;
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_WARNING);
	/* On card B only, which the user carries now (present) while A is not: B signs, so the
	 * old subkey is superseded; with A plugged in as well, A still signs with the old one. */
	subs[2].secret = SECRET_CARD;
	strcpy(subs[2].card_serial, "D2760001240103040006876543210000");
	strcpy(subs[1].token_id, "yubikey-12345678");
	strcpy(subs[2].token_id, "yubikey-87654321");
	subs[2].token_present = true;
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(k.level, LEVEL_OK);
	subs[1].token_present = true;
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_WARNING);
	/* Neither plugged in: which one the user carries is unknown, the warning stays. */
	subs[1].token_present = subs[2].token_present = false;
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_WARNING);
	subs[1].token_id[0] = subs[2].token_id[0] = 0;
	/* Moved to card A: superseded. */
	subs[2].secret = SECRET_CARD;
	strcpy(subs[2].card_serial, subs[1].card_serial);
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(k.level, LEVEL_OK);
}

TEST(revoked_and_retired)
{
	struct subkey subs[3];
	struct config c = cfg;
	struct key k;

	/* A revoked, expired subkey beside a valid one counts for nothing. */
	rotated(&k, subs, 3);
	rotation(&subs[1], CAP_SIGN, NOW - 360 * DAY, NOW - 3 * DAY);
	subs[1].revoked = true;
	rotation(&subs[2], CAP_ENCRYPT, NOW - 1 * DAY, NOW + 365 * DAY);
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(subs[1].expiry_level, LEVEL_EXPIRED);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(k.level, LEVEL_OK);

	/* A retired key whose primary expired: shown, every level ok. */
	subs[0].expires = NOW - 30 * DAY;
	subs[0].expired = true;
	subs[1].revoked = false;
	expiry_apply(&k, 1, &cfg, NOW);
	ASSERT_EQ(k.level, LEVEL_EXPIRED);
	ASSERT_FALSE(k.retired);
	c.n_retired = 1;
	strcpy(c.retired[0], "c26e5bd792eb8f4ec1606b68b82e9f4ba59a4309");
	expiry_apply(&k, 1, &c, NOW);
	ASSERT_TRUE(k.retired);
	ASSERT_EQ(k.level, LEVEL_OK);
	for (size_t i = 0; i < 3; i++)
		ASSERT_EQ(subs[i].level, LEVEL_OK);
	ASSERT_EQ(subs[0].expiry_level, LEVEL_EXPIRED);
}

static int fired;

static int on_deadline(struct expiry_timer *t, int64_t now, void *userdata)
{
	fired++;
	return sd_event_exit(userdata, 0);
}

TEST(timer)
{
	_cleanup_(expiry_timer_freep) struct expiry_timer *t = NULL;
	sd_event *e = NULL;

	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(expiry_timer_new(e, on_deadline, e, &t));
	/* Disarming before arming is fine. */
	ASSERT_OK(expiry_timer_arm(t, 0));
	ASSERT_OK(expiry_timer_arm(t, (int64_t)time(NULL) + 3600));
	/* Re-arm to a deadline already past: fires on the next iteration. */
	ASSERT_OK(expiry_timer_arm(t, (int64_t)time(NULL) - 1));
	ASSERT_OK(sd_event_loop(e));
	ASSERT_EQ(fired, 1);
	t = expiry_timer_free(t);
	sd_event_unref(e);
}

int main(void)
{
	config_init(&cfg);
	RUN(days_left);
	RUN(format);
	RUN(levels);
	RUN(threshold_crossed);
	RUN(next_change);
	RUN(apply);
	RUN(replaced);
	RUN(two_rotations);
	RUN(replacement_not_on_card);
	RUN(revoked_and_retired);
	RUN(timer);
	return 0;
}
