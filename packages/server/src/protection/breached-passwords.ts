/**
 * Breached-password detection against a local corpus. This machine has no internet, so there is no k-anonymity
 * lookup (Have I Been Pwned range API) and no multi-million-entry dump: the corpus is the common-password list of
 * connections/password-policy.ts plus the list below, a few hundred passwords that top every public breach
 * compilation (RockYou, the NCSC's 100k list, the yearly "worst passwords" reports). It catches the passwords
 * credential-stuffing tries first, not every breached password. Matching ignores case, as the dictionary check
 * does: breach corpora hold every capitalisation of these.
 * To use a bigger corpus, replace `BUNDLED` (for example with the password list of @zxcvbn-ts/language-common).
 */
import { checkPassword } from '../connections/password-policy.js';

const BUNDLED: ReadonlySet<string> = new Set(
  `123456789a 1234567891 12345678910 123456a@ 123456789q 1234512345 0123456789 0987654321 9876543210 11111 1111
  11111111111 112233445566 121212121 123123123 123456123 1234561234 12345678a 123456789z 1qaz2wsx3edc4rfv 1q2w3e4r5t6y
  1q2w3e4r5t6y7u 1qazxsw23edc 1qaz@wsx 1q2w3e4r! 1q2w3e! qwerty1! qwerty12345 qwerty123456 qwertyuiop123 qwertyui123
  qwert qwe123qwe qwe123! qweqwe qweqwe123 qazwsx123 qazwsxedcrfv zxcvbnm123 zxc123 zxcvb asdfg asdf asdfasdf asd123456
  asdf123 asdfgh123 asdfghjkl123 abc123abc abcd1234! abcdefg abcdefgh abcdefg123 abc12345678 aa12345678 a1b2c3d4e5
  password1234 password12345 passw0rd1 passw0rd! p@ssw0rd1 p@ssw0rd! p@$$w0rd pa$$word pa$$w0rd pass pass1 pass12
  pass@123 pass1word password01 password7 password9 password11 password99 password2020 password2021 password2022
  password2023 password2024 password2025 password@1 password#1 password$ password123! password1234! password12! passw0rd123
  admin1 admin12 admin1234 admin12345 admin@123 admin123! administrator1 root123 root1234 rootroot toor123 test1234
  test12345 test@123 testtest tester demo demo123 user user123 user1234 guest123 temp temp123 temp1234 changeme1
  changeme123 letmein! letmein12 welcome01 welcome12 welcome1! welcome@123 welcome2020 welcome2021 welcome2022
  welcome2023 welcome2024 summer2019 summer2020 summer2021 summer2022 summer2023 summer2024 spring2021 spring2022
  spring2023 spring2024 winter2019 winter2020 winter2021 winter2022 winter2023 winter2024 autumn2022 autumn2023
  fall2022 fall2023 january1 monday1 football123 baseball123 soccer123 hockey123 basketball basketball1 superman123
  batman123 spiderman spiderman1 starwars123 pokemon123 princess123 sunshine123 iloveyou123 iloveyou2 iloveyou! iloveu2
  loveyou loveyou1 lovelove mylove babygirl babygirl1 baby123 angel1 angel123 blessed blessed1 jesus1 jesuschrist
  christ god123 goodluck happy happy123 hello1234 helloworld hello@123 hallo123 bonjour azerty azerty123 azertyuiop
  qwertz qwertz123 123qweasd 1qw23er4 zaq1@wsx zaq!2wsx xsw2zaq1 dragon1 dragon12 monkey1 monkey12 shadow1 shadow123
  master1 master12 michael123 jordan jordan1 jordan123 ashley1 jessica1 charlie123 daniel1 thomas1 robert1 andrew1
  joshua1 george1 hunter1 hunter123 killer1 ranger1 buster1 tigger1 cookie1 pepper1 ginger1 maggie1 bailey1 jennifer1
  michelle1 nicole nicole1 daniel123 matthew1 anthony anthony1 william william1 richard joseph1 charles samantha
  taylor taylor1 amanda amanda1 jasmine jasmine1 justin justin1 andrea melissa melissa1 sophie chelsea1 liverpool1
  arsenal1 manchester manutd barcelona1 realmadrid juventus qwerty007 007007 james007 bond007 trustno1! letmein2
  access123 secret1234 secret! mysecret private confidential security security1 system system1 server computer1
  internet1 google123 facebook facebook1 instagram twitter youtube linkedin microsoft windows windows1 apple123
  iphone samsung1 nokia android linux ubuntu oracle cisco cisco123 default1 default123 blank nopassword nothing1
  whatever1 123abc! abc@123 1234abcd! qwer1234 qwer1234! 1234qwer! asdf1234! zxcv1234 1111aaaa aaaa1111 a1a1a1
  aaa111 abc111 qq123456 q123456 q1234567 qwe12345 zz123456 xx123456 woaini 5201314 1314520 woaini1314 888888888
  88888888 666666666 6666666 777777777 111111111 1111111111 000000000 0000000000 123123123123 456456 789789 147852
  147852369 258456 159159 741852 963852741 852456 321321 123321123 112358 11235813 1029384756 5555555555`
    .split(/\s+/)
    .filter(Boolean),
);

/** `dictionary` mode of the connection password policy, used only for its common-password list. */
const COMMON_LIST_ONLY = { passwordPolicy: 'none', password_dictionary: { enable: true } } as const;

export function isBreachedPassword(password: string): boolean {
  if (!password) return false;
  if (BUNDLED.has(password.toLowerCase())) return true;
  const check = checkPassword(password, COMMON_LIST_ONLY);
  return !check.ok && check.code === 'password_dictionary_error';
}
