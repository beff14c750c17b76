import { describe, expect, it } from '@jest/globals';
import type { NetworkInterfaceInfo } from 'node:os';
import { isForbiddenAddress, isHostAddress, type NetworkInterfaces } from './forbidden-address.policy.js';

describe('isForbiddenAddress', () => {
  it.each([
    // IPv4 loopback, private, link-local (cloud metadata), CGNAT, unspecified, multicast, broadcast, reserved
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '192.168.255.255',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.0.8',
    '192.0.2.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    // IPv6 loopback, unspecified, unique local, link-local, multicast, documentation, Teredo
    '::1',
    '::',
    '0:0:0:0:0:0:0:1',
    '[::1]',
    'fc00::1',
    'fd12:3456:789a::1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '100::1',
    '64:ff9b:1::1',
    // IPv6 forms that carry a forbidden IPv4 address
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '[::ffff:7f00:1]',
    '0:0:0:0:0:ffff:7f00:0001',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::ffff:0:127.0.0.1',
    '::127.0.0.1',
    '::7f00:1',
    '::8.8.8.8',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
    '2002:c0a8:101::1',
  ])('refuses %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '192.167.1.1',
    '192.169.1.1',
    '198.17.255.255',
    '198.20.0.1',
    '223.255.255.255',
    '11.0.0.1',
    '126.255.255.255',
    '128.0.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '[2001:4860:4860::8888]',
    '2a00:1450:4001:80b::200e',
    'fbff::1',
    'fe7f::1',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ])('allows %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });

  it.each(['', 'localhost', 'example.com', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '1.2.3.4.5', '256.1.1.1', ':::1', '1::2::3', '12345::1', 'fe80::1%'])(
    'fails closed on %j, which is not an IP address',
    (value) => {
      expect(isForbiddenAddress(value)).toBe(true);
    },
  );
});

/** A host whose interfaces are these addresses: `os.networkInterfaces` stood in for at the boundary. */
function hostWith(...addresses: string[]): NetworkInterfaces {
  const infos = addresses.map(
    (address): NetworkInterfaceInfo =>
      address.includes(':')
        ? { address, family: 'IPv6', netmask: 'ffff:ffff:ffff:ffff::', mac: '02:00:00:00:00:01', internal: false, cidr: `${address}/64`, scopeid: 0 }
        : { address, family: 'IPv4', netmask: '255.255.255.0', mac: '02:00:00:00:00:01', internal: false, cidr: `${address}/24` },
  );
  return () => ({ lo: [], eth0: infos, down: undefined });
}

describe('isHostAddress', () => {
  const host = hostWith('203.0.114.7', '2a01:4f8:0:a::5', 'fe80::1%eth0');

  it.each(['203.0.114.7', '::ffff:203.0.114.7', '[::ffff:cb00:7207]', '::ffff:0:203.0.114.7', '2a01:4f8:0:a::5', '2a01:04f8:0000:000a:0000:0000:0000:0005', '[2a01:4f8:0:a:0:0:0:5]', 'fe80::1'])(
    'knows %s as one of the host\'s own addresses',
    (ip) => {
      expect(isHostAddress(ip, host)).toBe(true);
    },
  );

  it.each(['203.0.114.8', '2a01:4f8:0:a::6', '8.8.8.8', 'localhost', ''])('does not take %j for one', (ip) => {
    expect(isHostAddress(ip, host)).toBe(false);
  });

  it('reads the interfaces at each check', () => {
    let addresses = ['203.0.114.7'];
    const changing: NetworkInterfaces = () => hostWith(...addresses)();
    expect(isHostAddress('198.51.99.1', changing)).toBe(false);
    addresses = ['198.51.99.1'];
    expect(isHostAddress('198.51.99.1', changing)).toBe(true);
    expect(isHostAddress('203.0.114.7', changing)).toBe(false);
  });
});
