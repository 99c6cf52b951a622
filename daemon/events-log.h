/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logs every model event once to the journal, with a stable MESSAGE_ID per event type and
 * structured fields (KEYCTL_SERIAL, KEYCTL_KIND, KEYCTL_READER, KEYCTL_KEY, ...), so that
 * `journalctl --user MESSAGE_ID=...` finds all insertions of a token, say.
 */
#pragma once

#include "model.h"

#define MESSAGE_ID_TOKEN_ADDED "0154d35456b743dc95122661f07e7a4b"
#define MESSAGE_ID_TOKEN_CHANGED "7318f6d561934dba806bc2ca01d8593f"
#define MESSAGE_ID_TOKEN_REMOVED "543d949c64e34271b22bd9722ebcf9e2"
#define MESSAGE_ID_KEY_ADDED "b881e5bd81e240008d644f499d5a0fe9"
#define MESSAGE_ID_KEY_CHANGED "59d167b1e82c4fb289a6f8f71a295d10"
#define MESSAGE_ID_KEY_REMOVED "f57a260816c1462f9833f92e06477c88"
#define MESSAGE_ID_LEVEL_CHANGED "bddbfe18c9bb48bd9521b3123f17cfb4"
#define MESSAGE_ID_FINDING_RAISED "c9cd8649abd14a0092f448d5d26fdd53"
#define MESSAGE_ID_FINDING_CLEARED "e1e16cbc65854335bd176fb2d5226dd1"
#define MESSAGE_ID_DAEMON_CHANGED "db51e0f458ff4e4cbae009e1b7855f52"
#define MESSAGE_ID_TOUCH_PENDING "94fb9b2e0b954c7984a22c00e4523ee8"
#define MESSAGE_ID_TOUCH_DONE "3f5713e4191a4c5a896f1424ab805636"

int events_log_attach(struct model *m);
