// fetch for URLs the server connects to on its own (cloud providers, model
// downloads), with the address rules applied where the name is resolved for
// the connection: a check that resolved the name separately would look at
// one answer and connect to another (DNS rebinding), and fail open when its
// lookup failed. undici's Agent takes the lookup for its sockets; its own
// fetch goes with it, so both are the same version whatever Node bundles.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, fetch as undiciFetch } from 'undici';
import { addressProblem, checkRemoteUrlWithRules, type AddressRules } from './remote-url';

/** A connection the address rules refused; `cause` of the TypeError fetch throws, or thrown before fetching. */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_STT_REFUSED_ADDRESS';
  constructor(reason: string) {
    super(reason);
    this.name = 'RefusedAddressError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Resolve = (host: string, options: LookupOptions & { all: true }, cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A dns.lookup for net.connect that refuses the name when any address it
 * resolves to breaks the rules (a name with one metadata address among
 * public ones is refused, not filtered: it is not what the host configured).
 */
export function checkedLookup(rules: AddressRules, resolve: Resolve = dnsLookup as unknown as Resolve) {
  return (host: string, options: LookupOptions, cb: LookupCallback): void => {
    resolve(host, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, []);
      for (const a of addresses) {
        const problem = addressProblem(a.address, rules);
        if (problem) return cb(new RefusedAddressError(`${host} resolves to ${a.address}: ${problem}`), []);
      }
      if (!addresses.length) return cb(Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return cb(null, addresses);
      cb(null, addresses[0].address, addresses[0].family);
    });
  };
}

const agents = new Map<string, Agent>();
function agentFor(rules: AddressRules): Agent {
  const key = `${rules.allowInsecureLoopback}/${rules.allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) agents.set(key, (agent = new Agent({ connect: { lookup: checkedLookup(rules) } })));
  return agent;
}

/** fetch under the address rules: a refused URL or address throws RefusedAddressError (directly, or as the cause of fetch's TypeError). */
export async function checkedFetch(url: string, init: RequestInit, rules: AddressRules): Promise<Response> {
  const problem = checkRemoteUrlWithRules(url, rules);
  if (problem) throw new RefusedAddressError(problem);
  // undici's fetch takes Node's FormData and Blob (it recognises them by shape); its Response is the same API.
  return (await undiciFetch(url, { ...(init as object), dispatcher: agentFor(rules) } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
}

/** The RefusedAddressError behind a failed checkedFetch, if that is why it failed. */
export function refusedAddress(err: unknown): RefusedAddressError | null {
  if (err instanceof RefusedAddressError) return err;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof RefusedAddressError ? cause : null;
}
