package cli

import (
	"slices"

	"github.com/zarlog/zarlog/verifier"
)

type cliMsg int

const (
	mUsage cliMsg = iota
	mUnknownFlag
	mNoValue
	mBadBool
	mBadLang
	mNoFile
	mTooManyFiles
	mBadExpected
	mBadLogKey
	mBadEmitterKey
	mBadEmitterKeys
	mPolicyUnreadable
	mBadPolicy
	mLeafUnreadable
	numCLIMsgs
)

// cliTexts holds the command line's own words, one verifier.Text each
// (named "Cli" and the identifier without its "m"); the verifier's
// messages are in package verifier. The JavaScript package's command line
// says the same words: its messages.js is generated from this table too.
var cliTexts = [numCLIMsgs]verifier.Text{
	mUsage: {"CliUsage",
		`usage: zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEALCODE]
                     [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... [--leaf FILE] FILE|-

Checks a dice-proof-v1 evidence file or proof bundle offline and says what it proves;
also checks a .tlog-proof file of one event (with --log-key).
  FILE|-                 the file; - reads standard input
  --json                 print one JSON object instead of text
  --lang en|tr|ar        the language of the messages (default en)
  --expected-commitment  the commitment (64 hex digits) or the seal code you saw before the game
  --log-key              the verifier key of the log the proof must come from
  --witness-policy       a C2SP tlog-policy file: the witnesses that must have cosigned the checkpoint
  --emitter-key          the verifier key of the game server that must have signed the events (repeatable)
  --leaf                 the event's bytes, for a .tlog-proof without an extra line
Exit code: 0 every check passed, 1 the proof is invalid, 2 bad input.
`,
		`kullanım: zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment ONALTILIK|MÜHÜRKODU]
                        [--log-key ANAHTAR] [--witness-policy DOSYA] [--emitter-key ANAHTAR]... [--leaf DOSYA] DOSYA|-

Bir dice-proof-v1 kanıt dosyasını ya da kanıt paketini çevrimdışı kontrol eder ve neyi kanıtladığını söyler;
tek bir olayın .tlog-proof dosyasını da (--log-key ile) kontrol eder.
  DOSYA|-                dosya; - standart girdiyi okur
  --json                 metin yerine tek bir JSON nesnesi yazdır
  --lang en|tr|ar        mesajların dili (varsayılan en)
  --expected-commitment  oyundan önce gördüğün taahhüt (64 onaltılık rakam) ya da mühür kodu
  --log-key              kanıtın gelmesi gereken kayıt defterinin doğrulama anahtarı
  --witness-policy       bir C2SP tlog-policy dosyası: kontrol noktasını ortak imzalamış olması gereken tanıklar
  --emitter-key          olayları imzalamış olması gereken oyun sunucusunun doğrulama anahtarı (tekrarlanabilir)
  --leaf                 extra satırı olmayan bir .tlog-proof için olayın baytları
Çıkış kodu: 0 her kontrol geçti, 1 kanıt geçersiz, 2 hatalı girdi.
`,
		`الاستخدام: zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment ست_عشري|رمز_الختم] [--log-key مفتاح] [--witness-policy ملف] [--emitter-key مفتاح]... [--leaf ملف] ملف|-

يتحقق دون اتصال بالشبكة من ملف إثبات dice-proof-v1 أو حزمة إثبات ويقول ما يثبته؛
ويتحقق أيضًا من ملف .tlog-proof لحدث واحد (مع --log-key).
  الملف: الملف المطلوب فحصه، والشرطة - تعني القراءة من الدخل القياسي
  الخيار --json: اطبع كائن JSON واحدًا بدل النص
  الخيار --lang: لغة الرسائل، en أو tr أو ar (الافتراضية en)
  الخيار --expected-commitment: الالتزام (64 رقمًا ست عشريًا) أو رمز الختم الذي رأيته قبل اللعبة
  الخيار --log-key: مفتاح التحقق الخاص بالسجل الذي يجب أن يأتي منه الإثبات
  الخيار --witness-policy: ملف C2SP tlog-policy يسمّي الشهود الذين يجب أن يكونوا قد وقّعوا نقطة التحقق
  الخيار --emitter-key: مفتاح التحقق الخاص بخادم اللعبة الذي يجب أن يكون قد وقّع الأحداث (يمكن تكراره)
  الخيار --leaf: بايتات الحدث، لملف .tlog-proof لا يحوي السطر extra
رمز الخروج: 0 نجحت الفحوص كلها، 1 الإثبات غير صالح، 2 مدخلات خاطئة.
`},
	mUnknownFlag:  {"CliUnknownFlag", "unknown flag %[1]s", "bilinmeyen seçenek %[1]s", "خيار غير معروف %[1]s"},
	mNoValue:      {"CliNoValue", "the flag %[1]s needs a value", "%[1]s seçeneği bir değer ister", "الخيار %[1]s يحتاج إلى قيمة"},
	mBadBool:      {"CliBadBool", "the flag %[1]s takes only true or false", "%[1]s seçeneği yalnızca true ya da false alır", "الخيار %[1]s لا يقبل إلا true أو false"},
	mBadLang:      {"CliBadLang", "unknown language %[1]q: use en, tr or ar", "bilinmeyen dil %[1]q: en, tr ya da ar kullan", "لغة غير معروفة %[1]q: استعمل en أو tr أو ar"},
	mNoFile:       {"CliNoFile", "no evidence file given (use - for standard input)", "kanıt dosyası verilmedi (standart girdi için - kullan)", "لم يُعطَ ملف إثبات (استعمل - للدخل القياسي)"},
	mTooManyFiles: {"CliTooManyFiles", "one evidence file at a time, got %[1]d", "aynı anda yalnızca bir kanıt dosyası, verilen: %[1]d", "ملف إثبات واحد فقط في كل مرة، وقد أُعطي %[1]d"},
	mBadExpected: {"CliBadExpected", "--expected-commitment %[1]q is neither 64 hex digits nor an 8-symbol seal code",
		"--expected-commitment %[1]q ne 64 onaltılık rakam ne de 8 simgeli bir mühür kodu",
		"قيمة --expected-commitment %[1]q ليست 64 رقمًا ست عشريًا ولا رمز ختم من 8 رموز"},
	mBadLogKey: {"CliBadLogKey", "--log-key %[1]q is not a signed-note verifier key (name+hash+key)",
		"--log-key %[1]q bir signed-note doğrulama anahtarı (ad+özet+anahtar) değil",
		"قيمة --log-key %[1]q ليست مفتاح تحقق signed-note (الاسم+التجزئة+المفتاح)"},
	mBadEmitterKey: {"CliBadEmitterKey", "--emitter-key %[1]q is not a signed-note Ed25519 verifier key named after an emitter id (name+hash+key)",
		"--emitter-key %[1]q, bir sunucu kimliğiyle adlandırılmış bir signed-note Ed25519 doğrulama anahtarı (ad+özet+anahtar) değil",
		"قيمة --emitter-key %[1]q ليست مفتاح تحقق signed-note من نوع Ed25519 يحمل اسم خادم (الاسم+التجزئة+المفتاح)"},
	mBadEmitterKeys: {"CliBadEmitterKeys", "the same --emitter-key is given twice",
		"aynı --emitter-key iki kez verildi",
		"أُعطي المفتاح نفسه في --emitter-key مرتين"},
	mPolicyUnreadable: {"CliPolicyUnreadable", "cannot read the --witness-policy file %[1]q: %[2]s",
		"--witness-policy dosyası %[1]q okunamadı: %[2]s",
		"تعذّرت قراءة ملف --witness-policy %[1]q: %[2]s"},
	mBadPolicy: {"CliBadPolicy", "the --witness-policy file %[1]q is not a C2SP tlog-policy: %[2]s",
		"--witness-policy dosyası %[1]q bir C2SP tlog-policy değil: %[2]s",
		"ملف --witness-policy %[1]q ليس سياسة C2SP tlog-policy: %[2]s"},
	mLeafUnreadable: {"CliLeafUnreadable", "cannot read the --leaf file %[1]q: %[2]s",
		"--leaf dosyası %[1]q okunamadı: %[2]s",
		"تعذّرت قراءة ملف --leaf %[1]q: %[2]s"},
}

func render(l verifier.Lang, id cliMsg, args ...any) string {
	return cliTexts[id].Format(l, args...)
}

// Texts returns the command line's own words as a table, in the order of
// their identifiers. The slice is new on every call.
func Texts() []verifier.Text { return slices.Clone(cliTexts[:]) }
