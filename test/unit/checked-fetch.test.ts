// The address rules for connections the server makes on its own, applied in
// the lookup the connection itself uses (src/net/checked-fetch.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { addressProblem } from '../../src/net/remote-url';
import { checkedLookup, RefusedAddressError, type Resolve } from '../../src/net/checked-fetch';

const PUBLIC = { allowInsecureLoopback: false, allowPrivate: false };

test('addressProblem: metadata and link-local never; loopback and private networks only when the host allows them', () => {
  for (const a of ['169.254.169.254', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::169.254.169.254', 'fe80::1', 'fd00:ec2::254', '0.0.0.0', '::ffff:0.0.0.0']) {
    assert.match(addressProblem(a, { allowInsecureLoopback: true, allowPrivate: true }) ?? '', /metadata/, a);
  }
  for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.2', '::ffff:7f00:2']) {
    assert.match(addressProblem(a, PUBLIC) ?? '', /loopback/, a);
    assert.equal(addressProblem(a, { allowInsecureLoopback: true, allowPrivate: false }), null, a);
    assert.equal(addressProblem(a, { allowInsecureLoopback: false, allowPrivate: true }), null, a);
  }
  for (const a of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.10', '100.64.0.1', 'fd12::1', '::ffff:10.0.0.1', '::ffff:a00:1']) {
    assert.match(addressProblem(a, { allowInsecureLoopback: true, allowPrivate: false }) ?? '', /private network/, a);
    assert.equal(addressProblem(a, { allowInsecureLoopback: false, allowPrivate: true }), null, a);
  }
  for (const a of ['93.184.216.34', '172.32.0.1', '2606:4700::1111']) assert.equal(addressProblem(a, PUBLIC), null, a);
});

test('addressProblem: an IPv6 address that carries an IPv4 address to a translator or tunnel is held to that IPv4 address too', () => {
  const BOTH = { allowInsecureLoopback: true, allowPrivate: true };
  // 169.254.169.254 as NAT64 (well-known prefix), translated, 6to4 and a Teredo client (inverted).
  for (const a of ['64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '::ffff:0:a9fe:a9fe', '2002:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:5601:5601', '::a9fe:a9fe', '64:ff9b::a9fe:a9fe%br-lan']) {
    assert.match(addressProblem(a, BOTH) ?? '', /metadata/, a);
  }
  for (const a of ['64:ff9b::7f00:1', '2002:7f00:1::1', '::7f00:1']) assert.match(addressProblem(a, PUBLIC) ?? '', /loopback/, a);
  for (const a of ['64:ff9b::a00:1', '2002:c0a8:101::1', '64:ff9b:1::a00:1', '64:ff9b:1:ffff::1']) {
    assert.match(addressProblem(a, PUBLIC) ?? '', /private network/, a);
    assert.equal(addressProblem(a, { allowInsecureLoopback: false, allowPrivate: true }), null, a);
  }
  // The same prefixes carrying a public IPv4 address stay reachable.
  for (const a of ['64:ff9b::5db8:d822', '2002:5db8:d822::1', '2001:0:4136:e378:8000:63bf:a247:29dd', '::5db8:d822']) assert.equal(addressProblem(a, PUBLIC), null, a);
  // Zone IDs, in every form Node's isIP takes (ipaddr.js takes fewer), are checked, not thrown on.
  for (const a of ['fe80::1%eth0', 'fe80::1%eth0.100', 'fe80::1%br-lan']) assert.match(addressProblem(a, BOTH) ?? '', /metadata/, a);
  // :: and ::1 are themselves, not IPv4 addresses.
  assert.match(addressProblem('::1', PUBLIC) ?? '', /loopback/);
});

/** A resolver answering from a table, counting its calls. */
function table(answers: Record<string, string[]>): { resolve: Resolve; calls: string[] } {
  const calls: string[] = [];
  const resolve: Resolve = (host, _options, cb) => {
    calls.push(host);
    const list: LookupAddress[] = (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    setImmediate(() => cb(null, list));
  };
  return { resolve, calls };
}

const lookupOnce = (lookup: ReturnType<typeof checkedLookup>, host: string, all: boolean) =>
  new Promise<{ err: Error | null; address: unknown }>((resolve) => lookup(host, { all }, (err, address) => resolve({ err, address })));

test('checkedLookup: the one resolution the connection uses is the one checked; a name with any refused address is refused', async () => {
  const { resolve, calls } = table({
    'provider.example': ['93.184.216.34', '2606:4700::1111'],
    'rebind.example': ['93.184.216.34', '169.254.169.254'],
    'lan.example': ['192.168.1.20'],
  });
  const lookup = checkedLookup(PUBLIC, resolve);
  assert.deepEqual(await lookupOnce(lookup, 'provider.example', false), { err: null, address: '93.184.216.34' });
  const all = await lookupOnce(lookup, 'provider.example', true);
  assert.deepEqual((all.address as LookupAddress[]).map((a) => a.address), ['93.184.216.34', '2606:4700::1111']);
  const rebind = await lookupOnce(lookup, 'rebind.example', true);
  assert.ok(rebind.err instanceof RefusedAddressError);
  assert.match(rebind.err.message, /^rebind\.example resolves to 169\.254\.169\.254: link-local and metadata addresses are refused$/);
  assert.ok((await lookupOnce(lookup, 'lan.example', false)).err instanceof RefusedAddressError);
  assert.equal((await lookupOnce(checkedLookup({ allowInsecureLoopback: false, allowPrivate: true }, resolve), 'lan.example', false)).address, '192.168.1.20');
  assert.deepEqual(calls, ['provider.example', 'provider.example', 'rebind.example', 'lan.example', 'lan.example'], 'one resolution per connection');
});
