/**
 * Passwords of 8 characters or more that top the published lists of leaked
 * passwords (SecLists' most common, Have I Been Pwned's and NCSC's top
 * entries), lower-cased. NIST SP 800-63B §5.1.1.2 asks that a new password
 * be checked against such a list; shorter ones are refused for their length
 * already. A short built-in list rather than a dependency: the well-kept
 * packages ship hundreds of thousands of entries, and the guesses that
 * matter most against an online login (limited to 20 a minute) are these.
 */
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  `12345678 123456789 1234567890 12345678910 123123123 1234512345 0123456789 9876543210 87654321 987654321
11111111 111111111 1111111111 00000000 000000000 0000000000 22222222 88888888 99999999 12341234 11223344
123456123456 123321123 147258369 741852963 159753852 123456qwerty qwerty123 qwerty1234 qwerty12345
qwertyuiop qwertyui qwerty123456 1qaz2wsx 1q2w3e4r 1q2w3e4r5t 1q2w3e4r5t6y zaq12wsx zaq1zaq1 asdfghjkl
asdfghjk asdf1234 zxcvbnm1 zxcvbnm123 1qazxsw2 qazwsxedc qweasdzxc asdfasdf password password1
password12 password123 password1234 password! passw0rd p@ssw0rd p@ssword pa55word pa$$word passwort
password01 mypassword thepassword newpassword changeme changeme123 letmein1 letmein123 welcome1
welcome123 welcome2024 welcome2025 iloveyou iloveyou1 iloveyou2 sunshine sunshine1 princess princess1
football football1 baseball baseball1 basketball superman superman1 batman123 starwars trustno1
whatever computer internet michelle jennifer jessica1 charlie1 danielle sweetheart 1234qwer
qwer1234 abcd1234 abc12345 abcdefgh abcdefg1 a1b2c3d4 a1234567 aa123456 aaaaaaaa1 aa112233
admin123 admin1234 administrator administrator1 adminadmin root1234 rootroot test1234 test12345
testtest testing123 guest123 master123 masterkey secret123 secret1234 default1 letmein!
login123 access14 access123 dragon123 monkey123 shadow123 michael1 jordan23 liverpool chelsea1
arsenal1 manchester cookie123 pokemon1 minecraft fortnite1 summer2024 summer2025 winter2024 spring2024
autumn2024 december november september 12qwaszx q1w2e3r4 q1w2e3r4t5 1q2w3e4r! 123qweasd
qweqweqwe asdasdasd zxczxczxc azertyuiop azerty123 qwertz123 1234abcd 12345abc 12345qwert
hello123 hello1234 freedom1 flower123 samsung1 google123 facebook linkedin yahoo123 cardwork
cardwork1 cardwork123`.split(/\s+/),
);
