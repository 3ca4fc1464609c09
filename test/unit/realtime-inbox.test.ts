// When a realtime session stops reading its socket (src/http/realtime/session.ts):
// a client sending faster than it is served waits on TCP, not in the server's memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inboxFull } from '../../src/http/realtime/session';

const idle = { ending: false, waitingTurns: 0, maxWaitingTurns: 4, inboxEvents: 0, inboxBytes: 0 };
const MiB = 1024 * 1024;

test('the inbox is full at 16 events or at 4 MiB, whichever comes first; shutting down or too many turns waiting also stop the reading', () => {
  assert.equal(inboxFull(idle), false);
  assert.equal(inboxFull({ ...idle, inboxEvents: 15, inboxBytes: 4 * MiB - 1 }), false);
  assert.equal(inboxFull({ ...idle, inboxEvents: 16, inboxBytes: 100 }), true);
  // Two appends of 2 MiB (ws's maxPayload) fill it: 16 of them would be 32 MiB held for one session.
  assert.equal(inboxFull({ ...idle, inboxEvents: 2, inboxBytes: 4 * MiB }), true);
  assert.equal(inboxFull({ ...idle, inboxEvents: 1, inboxBytes: 2 * MiB }), false);
  assert.equal(inboxFull({ ...idle, ending: true }), true);
  assert.equal(inboxFull({ ...idle, waitingTurns: 4 }), true);
  assert.equal(inboxFull({ ...idle, waitingTurns: 3 }), false);
});
