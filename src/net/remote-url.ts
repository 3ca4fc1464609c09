// The rules for URLs the server itself connects to (model downloads, cloud
// providers): https only, so keys and weights never travel in clear; plain
// http only to a loopback address and only when the host opted in
// (STT_ALLOW_INSECURE_LOOPBACK, for tests and local mirrors); never to
// link-local or cloud metadata addresses, which hand out credentials.
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

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

/** Addresses of the host's own networks: reached only when the host allows it (STT_ALLOW_PRIVATE_ADDRESSES). */
const privateNets = new BlockList();
privateNets.addSubnet('10.0.0.0', 8, 'ipv4');
privateNets.addSubnet('172.16.0.0', 12, 'ipv4');
privateNets.addSubnet('192.168.0.0', 16, 'ipv4');
privateNets.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT, also cloud-internal ranges
privateNets.addSubnet('fc00::', 7, 'ipv6'); // unique local
// Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the
// network's prefix length, so it cannot be read out; treat it as the host's own.
privateNets.addSubnet('64:ff9b:1::', 48, 'ipv6');

/** Host part of a URL without IPv6 brackets or a trailing dot, lower case. */
const bareHost = (u: URL) => u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();

function addressFamily(address: string): 'ipv4' | 'ipv6' | null {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

const ipv4Of = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

/**
 * The IPv4 address an IPv6 address carries to a translator or tunnel, if any:
 * IPv4-compatible (::/96), mapped and translated (::ffff:0:0/96,
 * ::ffff:0:0:0/96), NAT64's well-known prefix (64:ff9b::/96), 6to4
 * (2002::/16) and Teredo's client (2001::/32, stored inverted). A connection to such an address reaches that IPv4 host
 * where the network translates, so it is held to the IPv4 host's rules too.
 */
function embeddedIPv4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  // A zone ID (fe80::1%eth0.100) names an interface, not another address; ipaddr.js takes fewer zone forms than isIP.
  const v6 = ipaddr.IPv6.parse(address.replace(/%.*$/, ''));
  const p = v6.parts;
  // IPv4-compatible (::a9fe:a9fe, deprecated; what tunnels of old took), but for :: and ::1.
  // ipaddr.js reads the dotted form ::a.b.c.d as mapped, which the switch below takes.
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1)) return ipv4Of(p[6], p[7]);
  switch (v6.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return ipv4Of(p[6], p[7]);
    case 'rfc6052':
      return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? ipv4Of(p[6], p[7]) : null;
    case '6to4':
      return ipv4Of(p[1], p[2]);
    case 'teredo':
      return ipv4Of(p[6] ^ 0xffff, p[7] ^ 0xffff);
    default:
      return null;
  }
}

export function isForbiddenAddress(address: string): boolean {
  const family = addressFamily(address);
  if (family === null) return false;
  const v4 = embeddedIPv4(address);
  return forbidden.check(address, family) || (v4 !== null && forbidden.check(v4, 'ipv4'));
}

/** Which addresses beyond the public internet the server may connect to. */
export interface AddressRules {
  /** Loopback (STT_ALLOW_INSECURE_LOOPBACK: tests and local mirrors). */
  allowInsecureLoopback: boolean;
  /** Loopback and private networks, over https too (STT_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivate: boolean;
}

/** Null when the server may connect to the IP address `address`, otherwise why not. */
export function addressProblem(address: string, rules: AddressRules): string | null {
  const family = addressFamily(address);
  if (family === null) return null;
  // A mapped address (::ffff:a.b.c.d) meets no IPv6 rule of ours; Node's BlockList already checks it against
  // the IPv4 rules, and embeddedIPv4() holds it (and the other forms) to them whatever Node does.
  const v4 = embeddedIPv4(address);
  return ownProblem(address, family, rules) ?? (v4 === null ? null : ownProblem(v4, 'ipv4', rules));
}

function ownProblem(a: string, family: 'ipv4' | 'ipv6', rules: AddressRules): string | null {
  if (forbidden.check(a, family)) return 'link-local and metadata addresses are refused';
  if (loopback.check(a, family)) {
    return rules.allowInsecureLoopback || rules.allowPrivate ? null : 'loopback addresses need STT_ALLOW_PRIVATE_ADDRESSES=true';
  }
  if (privateNets.check(a, family)) return rules.allowPrivate ? null : 'private network addresses need STT_ALLOW_PRIVATE_ADDRESSES=true';
  return null;
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
 * checkRemoteUrl, plus the address rules for a host written as an IP address.
 * A name is checked when it is resolved for the connection itself
 * (net/checked-fetch.ts): once, so what is checked is what is connected to.
 */
export function checkRemoteUrlWithRules(raw: string, rules: AddressRules): string | null {
  const problem = checkRemoteUrl(raw, rules.allowInsecureLoopback);
  if (problem) return problem;
  const host = bareHost(new URL(raw));
  return addressFamily(host) ? addressProblem(host, rules) : null;
}
