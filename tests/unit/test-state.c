/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Remembered tokens: what is written is read back the same (but absent and without an error),
 * tokens without a serial are not remembered, and a damaged file is refused whole. Also the
 * daemon-side round trip: a model saved by state.c and loaded into a fresh model; and the
 * temporary file the save goes through, made new whatever is found at its name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "state.h"
#include "test.h"

static struct token yubikey(void)
{
	struct token t;

	memset(&t, 0, sizeof(t));
	strcpy_trunc(t.id, sizeof(t.id), "yubikey-12345678");
	t.kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(t.model, sizeof(t.model), "YubiKey 5 NFC");
	strcpy_trunc(t.serial, sizeof(t.serial), "12345678");
	strcpy_trunc(t.reader, sizeof(t.reader), "Yubico YubiKey OTP+FIDO+CCID 00 00");
	t.present = true;
	t.first_seen = 1700000000;
	t.last_seen = 1790000000;
	t.has_openpgp = true;
	t.read_path = READ_PATH_PCSC;
	strcpy_trunc(t.openpgp.serial, sizeof(t.openpgp.serial), "12345678");
	strcpy_trunc(t.openpgp.version, sizeof(t.openpgp.version), "3.4");
	strcpy_trunc(t.openpgp.aid, sizeof(t.openpgp.aid), "D2760001240103040006123456780000");
	strcpy_trunc(t.openpgp.manufacturer, sizeof(t.openpgp.manufacturer), "Yubico");
	t.openpgp.manufacturer_id = 6;
	strcpy_trunc(t.openpgp.slots[SLOT_SIGN].fingerprint, FPR_HEX_MAX,
	             "0123456789ABCDEF0123456789ABCDEF01234567");
	t.openpgp.signature_counter = 42;
	strcpy_trunc(t.error, sizeof(t.error), "transient");
	return t;
}

TEST(round_trip)
{
	struct token in[2], out[4];
	_cleanup_(freep) char *text = NULL;
	int n;

	in[0] = yubikey();
	/* Waiting for a touch as it is saved: the wait is not remembered (issue 34). */
	in[0].touch_waiting = true;
	in[0].touch.application = TOUCH_APP_OPENPGP;
	strcpy_trunc(in[0].touch.slot, sizeof(in[0].touch.slot), "sig");
	in[0].touch.since = 1790000000;
	memset(&in[1], 0, sizeof(in[1]));
	strcpy_trunc(in[1].id, sizeof(in[1].id), "openpgp-card-r1234");
	in[1].kind = TOKEN_KIND_OPENPGP_CARD; /* no serial: not remembered */

	ASSERT_OK(state_format(in, 2, &text));
	ASSERT_TRUE(!strstr(text, "touch_pending"));
	n = state_parse((const uint8_t *)text, strlen(text), out, 4);
	ASSERT_EQ(n, 1);
	ASSERT_STREQ(out[0].id, "yubikey-12345678");
	ASSERT_FALSE(out[0].present);
	ASSERT_STREQ(out[0].error, "");
	ASSERT_EQ(out[0].last_seen, 1790000000);
	ASSERT_EQ(out[0].openpgp.signature_counter, 42);
	in[0].present = false;
	memset(in[0].error, 0, sizeof(in[0].error));
	in[0].touch_waiting = false;
	memset(&in[0].touch, 0, sizeof(in[0].touch));
	ASSERT_EQ(memcmp(&in[0], &out[0], sizeof(struct token)), 0);
}

TEST(damaged_files)
{
	static const char *const bad[] = {
		"",
		"{}",
		"[]",
		"{\"version\": 2, \"tokens\": []}",
		"{\"version\": 1}",
		"{\"version\": 1, \"tokens\": {}}",
		"{\"version\": 1, \"tokens\": [{\"id\": 5}]}",
		"{\"version\": 1, \"tokens\": [1]}",
		"{\"version\": 1, \"tokens\": []} trailing",
	};
	struct token out[2];
	_cleanup_(freep) char *text = NULL;
	struct token in[3];

	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		ASSERT_TRUE(state_parse((const uint8_t *)bad[i], strlen(bad[i]), out, 2) < 0);
	ASSERT_EQ(state_parse((const uint8_t *)bad[0], 0, out, 2), -EBADMSG);
	ASSERT_EQ(state_parse((const uint8_t *)"{\"version\": 1, \"tokens\": []}", 28, out, 2), 0);

	/* More tokens than the caller has room for: refused, not cut. */
	in[0] = in[1] = in[2] = yubikey();
	ASSERT_OK(state_format(in, 3, &text));
	ASSERT_ERR(state_parse((const uint8_t *)text, strlen(text), out, 2), EMSGSIZE);
	/* A NUL inside. */
	text[5] = 0;
	ASSERT_ERR(state_parse((const uint8_t *)text, strlen(text + 6) + 6, out, 2), EBADMSG);
}

TEST(daemon_round_trip)
{
	char dir[] = "/tmp/test-state-XXXXXX", path[256], err[512];
	_cleanup_(model_freep) struct model *m = NULL, *m2 = NULL;
	sd_event *e = NULL;
	struct state *s = NULL;
	const struct token *tokens;
	struct token t = yubikey();
	struct stat st;

	ASSERT_TRUE(mkdtemp(dir));
	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(model_new(&m));
	ASSERT_OK(state_new(e, m, dir, err, sizeof(err), &s));
	ASSERT_STREQ(err, "");

	t.present = false;
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &t, 1790000000));
	/* The write waits for the end of the loop iteration, and then for the writer thread,
	 * which state_free() waits for. */
	snprintf(path, sizeof(path), "%s/tokens.json", dir);
	ASSERT_TRUE(stat(path, &st) < 0);
	ASSERT_OK(sd_event_run(e, 0));
	s = state_free(s);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);

	ASSERT_OK(model_new(&m2));
	ASSERT_OK(state_new(e, m2, dir, err, sizeof(err), &s));
	ASSERT_EQ(model_tokens(m2, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "yubikey-12345678");
	ASSERT_FALSE(tokens[0].present);
	ASSERT_EQ(tokens[0].last_seen, 1790000000);
	s = state_free(s);

	/* A damaged file is reported and ignored. */
	ASSERT_OK(truncate(path, 10));
	model_free(TAKE_PTR(m2));
	ASSERT_OK(model_new(&m2));
	ASSERT_OK(state_new(e, m2, dir, err, sizeof(err), &s));
	ASSERT_TRUE(strstr(err, "not a keyctl state file"));
	ASSERT_EQ(model_tokens(m2, &tokens), 0);
	s = state_free(s);

	unlink(path);
	rmdir(dir);
	sd_event_unref(e);
}

TEST(default_dir)
{
	char buf[256];

	setenv("STATE_DIRECTORY", "/home/u/.local/state/keyctl:/other", 1);
	ASSERT_OK(state_default_dir(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/home/u/.local/state/keyctl");
	unsetenv("STATE_DIRECTORY");
	setenv("XDG_STATE_HOME", "/x/state", 1);
	ASSERT_OK(state_default_dir(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/x/state/keyctl");
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/home/u", 1);
	ASSERT_OK(state_default_dir(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/home/u/.local/state/keyctl");
}

static void read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	ASSERT_TRUE(fd >= 0);
	k = read(fd, buf, size - 1);
	ASSERT_TRUE(k >= 0);
	buf[k] = 0;
	close(fd);
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ASSERT_TRUE(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* One save through file_write_atomic(): path holds text after it, other is untouched, and no
 * temporary is left in dir. */
static void save(const char *dir, const char *path, const char *other, const char *text)
{
	char buf[64];

	ASSERT_OK(file_write_atomic(path, text, strlen(text)));
	read_text(path, buf, sizeof(buf));
	ASSERT_STREQ(buf, text);
	read_text(other, buf, sizeof(buf));
	ASSERT_STREQ(buf, "other's");
	ASSERT_EQ(entries(dir), 2);
}

/* What may wait at the temporary's name (tokens.json.tmp.<thread id>, the test's main thread's id
 * being its pid): a leftover of a dead process that had the id, a hard link to another file, a
 * symlink, a FIFO. Issue 32: it was opened with O_TRUNC and no O_EXCL, so a hard link's other
 * file was overwritten, a symlink failed every save (O_NOFOLLOW) and a FIFO hung the writer. Each
 * is now replaced by a new file; the other file stays as it was and no temporary is left. */
TEST(temporary_made_new)
{
	char dir[] = "/tmp/test-state-tmp-XXXXXX", path[256], tmp[300], other[256];
	struct stat st;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tokens.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	snprintf(other, sizeof(other), "%s/other", dir);
	ASSERT_OK(file_write_atomic(other, "other's", 7));

	ASSERT_OK(file_write_atomic(tmp, "stale stale stale", 17)); /* a leftover */
	save(dir, path, other, "first");
	ASSERT_OK(link(other, tmp)); /* a hard link to another file */
	save(dir, path, other, "second");
	ASSERT_OK(symlink(other, tmp));
	save(dir, path, other, "third");
	ASSERT_OK(lstat(path, &st));
	ASSERT_TRUE(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	/* a FIFO (last: before the fix, the open waited for a reader for ever) */
	ASSERT_OK(mkfifo(tmp, 0600));
	save(dir, path, other, "fourth");

	unlink(path);
	unlink(other);
	ASSERT_OK(rmdir(dir));
}

int main(void)
{
	RUN(round_trip);
	RUN(damaged_files);
	RUN(daemon_round_trip);
	RUN(temporary_made_new);
	RUN(default_dir);
	return 0;
}
