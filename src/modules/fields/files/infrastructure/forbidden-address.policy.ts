import { isIP } from 'node:net';
import type { networkInterfaces } from 'node:os';

type Bytes = number[];

function parseIPv4(ip: string): Bytes | null {
  const parts = ip.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
}

/** 16 bytes, or null; accepts `::`, a dotted IPv4 tail and a `%zone` suffix. */
function parseIPv6(ip: string): Bytes | null {
  let text = ip.replace(/%.*$/, '');
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseIPv4(dotted[2]);
    if (!v4) return null;
    text = `${dotted[1]}0:0`;
    tail.push(...v4);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string): string[] => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const bytes = all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** True when the first `bits` bits of `bytes` equal those of `prefix`. */
function inPrefix(bytes: Bytes, prefix: Bytes, bits: number): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i / 8] ?? 0) & mask) !== ((prefix[i / 8] ?? 0) & mask)) return false;
  }
  return true;
}

// Everything a server-side fetch must not reach on behalf of a client: the
// host itself, the private network, cloud metadata (169.254.169.254), and
// ranges that are not unicast on the public internet at all.
const IPV4_BLOCKED: [Bytes, number][] = [
  [[0, 0, 0, 0], 8], // "this network", including the unspecified 0.0.0.0
  [[10, 0, 0, 0], 8],
  [[100, 64, 0, 0], 10], // carrier-grade NAT
  [[127, 0, 0, 0], 8],
  [[169, 254, 0, 0], 16],
  [[172, 16, 0, 0], 12],
  [[192, 0, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2, 0], 24], // documentation
  [[192, 88, 99, 0], 24], // 6to4 relay anycast
  [[192, 168, 0, 0], 16],
  [[198, 18, 0, 0], 15], // benchmarking
  [[198, 51, 100, 0], 24], // documentation
  [[203, 0, 113, 0], 24], // documentation
  [[224, 0, 0, 0], 4], // multicast
  [[240, 0, 0, 0], 4], // reserved, including the broadcast 255.255.255.255
];

function isForbiddenIPv4(bytes: Bytes): boolean {
  return IPV4_BLOCKED.some(([prefix, bits]) => inPrefix(bytes, prefix, bits));
}

const hex = (...groups: number[]): Bytes => groups.flatMap((g) => [g >> 8, g & 0xff]);

// IPv6 ranges that carry an IPv4 address reach whatever that address reaches,
// so the embedded address decides (at the given byte offset).
const IPV6_EMBEDDING_IPV4: [Bytes, number, number][] = [
  [hex(0, 0, 0, 0, 0, 0xffff), 96, 12], // IPv4-mapped ::ffff:a.b.c.d
  [hex(0, 0, 0, 0, 0xffff, 0), 96, 12], // IPv4-translated ::ffff:0:a.b.c.d
  [hex(0x64, 0xff9b), 96, 12], // NAT64 64:ff9b::a.b.c.d
  [hex(0x2002), 16, 2], // 6to4 2002:abcd:ef01::
];

const IPV6_BLOCKED: [Bytes, number][] = [
  [hex(0), 96], // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  [hex(0x64, 0xff9b, 1), 48], // local-use NAT64
  [hex(0x100), 64], // discard-only
  [hex(0x2001, 0), 32], // Teredo: the IPv4 inside is obfuscated, so refuse the lot
  [hex(0x2001, 0xdb8), 32], // documentation
  [hex(0xfc00), 7], // unique local
  [hex(0xfe80), 10], // link-local
  [hex(0xfec0), 10], // deprecated site-local
  [hex(0xff00), 8], // multicast
];

/**
 * What an address reaches, as bytes: 4 for IPv4 and for the IPv6 forms that
 * carry an IPv4 address (that address decides), 16 for other IPv6; null when
 * it is not a well-formed IP. Takes an IP as `dns.lookup` returns it or a URL
 * hostname shows it (IPv6 with or without brackets, with or without `%zone`).
 */
function reached(ip: string): Bytes | null {
  const text = ip.trim().replace(/^\[(.*)\]$/, '$1');
  const version = isIP(text);
  if (version === 4) return parseIPv4(text);
  if (version !== 6) return null;
  const bytes = parseIPv6(text);
  if (bytes === null) return null;
  for (const [prefix, bits, offset] of IPV6_EMBEDDING_IPV4) {
    if (inPrefix(bytes, prefix, bits)) return bytes.slice(offset, offset + 4);
  }
  return bytes;
}

/**
 * Whether a server-side fetch must refuse to connect to this address.
 * Anything that is not a well-formed IP is refused: failing closed is the point.
 */
export function isForbiddenAddress(ip: string): boolean {
  const bytes = reached(ip);
  if (bytes === null) return true;
  return bytes.length === 4 ? isForbiddenIPv4(bytes) : IPV6_BLOCKED.some(([prefix, bits]) => inPrefix(bytes, prefix, bits));
}

/** `os.networkInterfaces`, or a stand-in for it. */
export type NetworkInterfaces = typeof networkInterfaces;

/**
 * Whether the address is one of the host's own interfaces, in any of its
 * forms (`::ffff:a.b.c.d` for an IPv4 one, IPv6 written long or short). The
 * ranges above cover loopback and the private networks; a server with a
 * public address of its own would otherwise fetch from itself, reaching
 * whatever listens there for the world only through a firewall in front.
 * Interfaces come and go (DHCP, a container joining a network): read them
 * at each check.
 */
export function isHostAddress(ip: string, interfaces: NetworkInterfaces): boolean {
  const bytes = reached(ip);
  if (bytes === null) return false;
  const key = bytes.join('.');
  return Object.values(interfaces()).some((infos) => infos?.some((info) => reached(info.address)?.join('.') === key));
}
