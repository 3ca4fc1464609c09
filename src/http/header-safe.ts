// A runtime's name as a header value (X-Stt-Runtime): characters a header may
// not carry (a provider model named before the admin API checked names)
// percent-encoded, so the answer still goes out instead of Node refusing the
// header with a 500; names as the admin API takes them now pass unchanged.
export const headerSafe = (name: string): string => name.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
