// The rules for URLs the server itself connects to (model downloads, cloud
// providers): https only, so keys and weights never travel in clear; plain
// http only to a loopback address and only when the host opted in
// (STT_ALLOW_INSECURE_LOOPBACK, for tests and local mirrors); never to
// link-local or cloud metadata addresses, which hand out credentials.
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

const forbidden = new BlockList();
forbidden.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, incl. 169.254.169.254 metadata
forbidden.addSubnet('fe80::', 10, 'ipv6'); // link-local
forbidden.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
forbidden.addAddress('0.0.0.0', 'ipv4');
forbidden.addAddress('::', 'ipv6');
const FORBIDDEN_NAMES = new Set(['metadata', 'metadata.google.internal', 'instance-data', 'instance-data.ec2.internal']);

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Host part of a URL without IPv6 brackets or a trailing dot, lower case. */
const bareHost = (u: URL) => u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();

function addressFamily(address: string): 'ipv4' | 'ipv6' | null {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

export function isForbiddenAddress(address: string): boolean {
  const family = addressFamily(address);
  return family !== null && forbidden.check(address, family);
}

/** Whether the URL's host is a loopback address or localhost. */
export const isLoopbackUrl = (raw: string): boolean => isLoopbackHost(bareHost(new URL(raw)));

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const family = addressFamily(host);
  return family !== null && loopback.check(host, family);
}

/** Null when `raw` may be connected to, otherwise why not (a sentence fragment). */
export function checkRemoteUrl(raw: string, allowInsecureLoopback: boolean): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'expected an https URL';
  }
  if (u.username || u.password) return 'credentials in the URL are not accepted';
  const host = bareHost(u);
  if (FORBIDDEN_NAMES.has(host) || isForbiddenAddress(host)) return 'link-local and metadata addresses are refused';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:') {
    if (!isLoopbackHost(host)) return 'expected an https URL (plain http only to a loopback address, with STT_ALLOW_INSECURE_LOOPBACK=true)';
    return allowInsecureLoopback ? null : 'plain http to a loopback address needs STT_ALLOW_INSECURE_LOOPBACK=true';
  }
  return 'expected an https URL';
}

/**
 * checkRemoteUrl, plus what the name resolves to right now: a name that
 * points at a link-local or metadata address is refused before connecting.
 */
export async function checkRemoteUrlResolved(raw: string, allowInsecureLoopback: boolean): Promise<string | null> {
  const problem = checkRemoteUrl(raw, allowInsecureLoopback);
  if (problem) return problem;
  const host = bareHost(new URL(raw));
  if (addressFamily(host)) return null;
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.some((a) => isForbiddenAddress(a.address)) ? 'the name resolves to a link-local or metadata address' : null;
}
