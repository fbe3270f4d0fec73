package verifier

import (
	"strings"

	"github.com/zarlog/zarlog/events/dice"
)

// A Lang is a language the verifier speaks: English, Turkish or Arabic.
type Lang string

// The languages of the verifier's messages.
const (
	English Lang = "en"
	Turkish Lang = "tr"
	Arabic  Lang = "ar"
)

// Langs returns the supported languages.
func Langs() []Lang { return []Lang{English, Turkish, Arabic} }

// ParseLang returns the Lang named by s ("en", "tr" or "ar").
func ParseLang(s string) (Lang, bool) {
	for _, l := range Langs() {
		if string(l) == s {
			return l, true
		}
	}
	return "", false
}

func (l Lang) index() int {
	switch l {
	case Turkish:
		return 1
	case Arabic:
		return 2
	}
	return 0
}

// A Message is a translatable text with its arguments. Arguments that are
// Messages, []Message or dice.Dice are rendered in the same language.
type Message struct {
	id   msgID
	args []any
}

func msg(id msgID, args ...any) Message { return Message{id, args} }

// In renders the message in language l.
func (m Message) In(l Lang) string {
	args := make([]any, len(m.args))
	for i, a := range m.args {
		switch x := a.(type) {
		case Message:
			args[i] = x.In(l)
		case []Message:
			parts := make([]string, len(x))
			for j, p := range x {
				parts[j] = p.In(l)
			}
			args[i] = strings.Join(parts, catalog[mListSep].In(l))
		case dice.Dice:
			args[i] = x.String()
		default:
			args[i] = a
		}
	}
	return catalog[m.id].Format(l, args...)
}

func (m Message) String() string { return m.In(English) }

type msgID int

const (
	mStPass msgID = iota
	mStFail
	mStSkipped

	mTitleFormat
	mTitleCommitment
	mTitleExpected
	mTitleAnchor
	mTitleRolls
	mTitleSequence
	mTitleLogInclusion
	mTitleLogSignature
	mTitleLogOrder
	mTitleLogAgreement
	mTitleLogWitnesses
	mTitleLogEmitter

	mInReadFailed
	mInNoSuchFile
	mInPermission
	mInIsDirectory
	mInTooLarge
	mInJSON
	mInJSONDup
	mInJSONFloat
	mInJSONUnsafe
	mInJSONDepth
	mInNotObject
	mInMissing
	mInWant

	mWantObject
	mWantArray
	mWantPair
	mWantString
	mWantUUID
	mWantHex32
	mWantHex
	mWantDie
	mWantU32
	mWantUint
	mWantKind
	mWantSecondFrom
	mWantFormat
	mWantScheme
	mWantOpening
	mWantOpponent
	mWantToken
	mWantTime
	mWantCheckpoint
	mWantEntries
	mWantLeaf
	mWantProof
	mWantHashRef
	mInDupHash
	mInUnusedHash
	mInTlogProof
	mInTlogNoExtra
	mInTlogLeafDiffers
	mInTlogNotEvent

	mFmtTavlarena
	mFmtAnchored
	mFmtPerRoll
	mFmtBundle
	mFmtTlog
	mSkNoValues

	mCmTavPass
	mCmTavFail
	mCmAncPass
	mCmAncFail
	mCmPerPass
	mCmPerNone
	mCmPerFail

	mExSkipTav
	mExSkipAnc
	mExSkipPer
	mExPass
	mExFail
	mExAncPass
	mExAncFail
	mExPerPass
	mExPerFail

	mAnPass
	mAnFail
	mAnUnknownChain
	mAnRoundZero
	mAnBadSig
	mAnBadRand
	mAnExisted

	mRoPass
	mRoNone
	mRoFail
	mRoFailPer

	mSqPass
	mSqWestern
	mSqTurkishDone
	mSqTurkishPending
	mSqOpeningPending
	mSqNone
	mSqGap
	mSqKind
	mSqWhyFirst
	mSqWhyTie
	mSqWhyReroll
	mSqWhyOneReroll
	mSqWhyDecided
	mKindOpening
	mKindReroll
	mKindTurn
	mSqPerPass
	mSqPerDup

	mLgNoLog
	mLgKeyNoLog
	mLgPolicyNoLog
	mLgEmitterNoLog

	mLiPass
	mLiBeyond
	mLiLength
	mLiFail
	mLiTlogPass
	mLsOrigin
	mLsBad
	mLsPass
	mLsPolicyPass
	mLsPolicyFail
	mLsNoKey
	mLsTlogNoKey
	mLwNone
	mLwBadCosig
	mLwQuorum
	mLwNotYet
	mLwPass
	mLoIndex
	mLoNotEvent
	mLoNoCommit
	mLoForeign
	mLoBeforeCommit
	mLoSeq
	mLoTokenAfterBeacon
	mLoNotFinal
	mLoPass
	mLaNotOrdered
	mLaRefused
	mLaPass
	mLaDiffer
	mLaMissing
	mLaExtra
	mEoNotClosed
	mEoSettings
	mEoNoBeacon
	mLeNone
	mLeUnknown
	mLeBad
	mLePass

	mSuPass
	mSuFail
	mSuInput
	mSuFailNote
	mSuPassNoKey
	mSuTlogPass
	mSuInputTlog
	mEvLine
	mHProves
	mHNotProves

	mStTavDice
	mStSealSeen
	mStSealIf
	mStTavPlayers
	mStTavServerKnew
	mStNoExpected
	mStNoExpectedAnc
	mStComputerProves
	mStComputerPeek
	mStAncDice
	mStFpSeen
	mStAncAnchor
	mStAncServerKnew
	mStAncSealTime
	mStAncAnchorComputer
	mStComputerPeekAnc
	mStPerDice
	mStPerSeen
	mStPerBefore
	mStPerServer
	mStPerClientLabel
	mStBundle
	mStBundleSigned
	mStBundleNoKey
	mStBundleWitnessed
	mStBundleNoWitness
	mStBundleNotWitnessed
	mStEmitterSigned
	mStEmitterUnchecked
	mStTlogIn
	mStTlogSigned
	mStTlogOnly
	mStNoExpectedLog
	mStNoExpectedAncLog

	mTitleMoves
	mMvNoLog
	mMvNoGame
	mMvNotLogged
	mMvPass
	mMvPassNone
	mMvPassFinished
	mMvPassResigned
	mMvIllegal
	mMvOwed
	mMvNotOver
	mMvWrongResult
	mMvRollRefused
	mMvRefused
	mMvDraw
	mMvWins
	mMvWinsCube
	mMvSingle
	mMvDouble
	mMvTriple
	mMvEnd
	mMvEndDraw
	mRuNotation
	mRuNonCanonical
	mRuNoChecker
	mRuBlocked
	mRuHitMark
	mRuBarFirst
	mRuPinned
	mRuHitAndRun
	mRuFirstChecker
	mRuBearOffNotHome
	mRuBearOffHigher
	mRuStartQuarter
	mRuPrimeTrap
	mRuMustMove
	mRuBothDice
	mRuMaxDice
	mRuLargerDie
	mRuDice
	mRuGameOver
	mRuNotOnTurn
	mRuRollMismatch
	mRuUnknown
	mStMoves
	mStMovesCube
	mStMovesEnd
	mStMovesNotLogged

	mListSep
	mStBundleSignedAnc
	mStBundleSignedPer
	mEndFinished
	mEndResigned
	mEndAbandoned
	mVdUntiedHead
	mVdFail
	mVdWrongSeal
	mVdBadInput
	mVdDiceTav
	mVdDiceAnc
	mVdDicePer
	mVdNoRolls
	mVdSealSeen
	mVdPerSeen
	mVdSealLogged
	mVdSealLoggedAnc
	mVdAnchor
	mVdInLog
	mVdUntied
	mVdNoLog
	mVdLimitTav
	mVdLimitAnc
	mVdLimitPer
	mVdLimitComputer
	mVdNotChecked
	mVdWitnessed
	mVdNotWitnessed
	mVdNCAnchor
	mVdNCLogWitnesses
	mVdNCLogEmitter
	mVdNCMoves
	mVdWrongRoll
	mVdSealOther
	mVdSealOtherPer
	mVdFailFormat
	mVdFailCommitment
	mVdFailExpected
	mVdFailAnchor
	mVdFailSequence
	mVdFailLogInclusion
	mVdFailLogSignature
	mVdFailLogOrder
	mVdFailLogAgreement
	mVdFailLogWitnesses
	mVdFailLogEmitter
	mVdFailMoves
	mVdFailOther

	mPxGame
	mPxSummary
	mPxCount
	mPxHeader

	numMsgs
)

// catalog holds every message: its name (the identifier without its "m",
// the key of MessageCatalog and of the JavaScript package's catalog), then
// its text in English, Turkish and Arabic, in that order: one entry per
// message, in one place. Arguments use explicit indexes (%[1]s) so that a translation can
// reorder them. Every Arabic text that can start a line starts with an
// Arabic word, so that a terminal applying the Unicode bidirectional
// algorithm lays the line out right to left; no bidi control characters
// are used (see docs/SCHEMES.md, "Reading the output").
var catalog = [numMsgs]Text{
	mStPass:    {"StPass", "PASS", "GEÇTİ", "ناجح"},
	mStFail:    {"StFail", "FAIL", "BAŞARISIZ", "فاشل"},
	mStSkipped: {"StSkipped", "SKIP", "ATLANDI", "لم يُفحص"},

	mTitleFormat:       {"TitleFormat", "format", "biçim", "الصيغة"},
	mTitleCommitment:   {"TitleCommitment", "commitment", "taahhüt", "الالتزام"},
	mTitleExpected:     {"TitleExpected", "expected-commitment", "beklenen taahhüt", "الالتزام المنتظر"},
	mTitleAnchor:       {"TitleAnchor", "anchor", "çıpa", "المرساة"},
	mTitleRolls:        {"TitleRolls", "rolls", "atışlar", "الرميات"},
	mTitleSequence:     {"TitleSequence", "sequence", "atış sırası", "تسلسل الرميات"},
	mTitleLogInclusion: {"TitleLogInclusion", "log-inclusion", "kayıt defterinde yer alma", "الإدراج في السجل"},
	mTitleLogSignature: {"TitleLogSignature", "log-signature", "kayıt defteri imzası", "توقيع السجل"},
	mTitleLogOrder:     {"TitleLogOrder", "log-order", "kayıt defterindeki sıra", "الترتيب في السجل"},
	mTitleLogAgreement: {"TitleLogAgreement", "log-agreement", "kayıt defteriyle uyum", "التوافق مع السجل"},
	mTitleLogWitnesses: {"TitleLogWitnesses", "log-witnesses", "tanıkların ortak imzaları", "تواقيع الشهود"},
	mTitleLogEmitter:   {"TitleLogEmitter", "log-emitter-signatures", "oyun sunucusunun imzaları", "تواقيع خادم اللعبة"},

	mInReadFailed:  {"InReadFailed", "cannot read the file: %[1]s", "dosya okunamadı: %[1]s", "تعذّرت قراءة الملف: %[1]s"},
	mInNoSuchFile:  {"InNoSuchFile", "there is no file %[1]q", "%[1]q adında bir dosya yok", "لا يوجد ملف باسم %[1]q"},
	mInPermission:  {"InPermission", "not allowed to read the file %[1]q (its permissions)", "%[1]q dosyasını okuma izni yok (dosya izinleri)", "لا يُسمح بقراءة الملف %[1]q (صلاحياته)"},
	mInIsDirectory: {"InIsDirectory", "%[1]q is a folder, not a file", "%[1]q bir klasör, dosya değil", "الاسم %[1]q مجلد وليس ملفًا"},
	mInTooLarge:    {"InTooLarge", "the file is larger than %[1]d bytes", "dosya %[1]d bayttan büyük", "الملف أكبر من %[1]d بايت"},
	mInJSON:        {"InJSON", "not valid JSON (at byte %[1]d)", "geçerli JSON değil (%[1]d. bayt)", "ليس JSON صالحًا (عند البايت %[1]d)"},
	mInJSONDup: {"InJSONDup", "a key appears twice in the same object (at byte %[1]d)",
		"aynı nesnede bir anahtar iki kez geçiyor (%[1]d. bayt)",
		"مفتاح مكرر في الكائن نفسه (عند البايت %[1]d)"},
	mInJSONFloat: {"InJSONFloat", "a number is not an integer; only integers are allowed (at byte %[1]d)",
		"bir sayı tam sayı değil; yalnızca tam sayılara izin verilir (%[1]d. bayt)",
		"عدد ليس صحيحًا، والمسموح به الأعداد الصحيحة وحدها (عند البايت %[1]d)"},
	mInJSONUnsafe: {"InJSONUnsafe", "an integer is outside ±(2^53−1) (at byte %[1]d)",
		"bir tam sayı ±(2^53−1) aralığının dışında (%[1]d. bayt)",
		"عدد صحيح خارج المدى ±(2^53−1) (عند البايت %[1]d)"},
	mInJSONDepth: {"InJSONDepth", "values are nested more than 64 levels deep (at byte %[1]d)",
		"değerler 64 düzeyden daha derin iç içe (%[1]d. bayt)",
		"القيم متداخلة أعمق من 64 مستوى (عند البايت %[1]d)"},
	mInNotObject: {"InNotObject", "the file is not a JSON object", "dosya bir JSON nesnesi değil", "الملف ليس كائن JSON"},
	mInMissing:   {"InMissing", "the required field %[1]s is missing", "zorunlu alan %[1]s eksik", "الحقل المطلوب %[1]s مفقود"},
	mInWant: {"InWant", "field %[1]s: expected %[2]s, found %[3]s",
		"%[1]s alanı: %[2]s bekleniyordu, bulunan: %[3]s",
		"الحقل %[1]s: كان المتوقع %[2]s، والموجود %[3]s"},

	mWantObject: {"WantObject", "a JSON object", "bir JSON nesnesi", "كائن JSON"},
	mWantArray:  {"WantArray", "an array", "bir dizi", "مصفوفة"},
	mWantPair:   {"WantPair", "an array of exactly 2 elements", "tam 2 öğeli bir dizi", "مصفوفة من عنصرين بالضبط"},
	mWantString: {"WantString", "a string", "bir metin (string)", "نص (string)"},
	mWantUUID: {"WantUUID", "a UUID in lower-case 8-4-4-4-12 form",
		"küçük harfli 8-4-4-4-12 biçiminde bir UUID",
		"معرّف UUID بأحرف صغيرة بالصيغة 8-4-4-4-12"},
	mWantHex32: {"WantHex32", "32 bytes as 64 lower-case hex digits",
		"64 küçük harfli onaltılık rakamla yazılmış 32 bayt",
		"قيمة من 32 بايت مكتوبة بـ 64 رقمًا ست عشريًا بأحرف صغيرة"},
	mWantHex: {"WantHex", "bytes as lower-case hex digits (an even number of them)",
		"küçük harfli onaltılık rakamlarla yazılmış baytlar (çift sayıda rakam)",
		"بايتات مكتوبة بأرقام ست عشرية بأحرف صغيرة (عدد زوجي منها)"},
	mWantDie:        {"WantDie", "an integer from 1 to 6", "1 ile 6 arasında bir tam sayı", "عدد صحيح من 1 إلى 6"},
	mWantU32:        {"WantU32", "an integer from 0 to 4294967295", "0 ile 4294967295 arasında bir tam sayı", "عدد صحيح من 0 إلى 4294967295"},
	mWantUint:       {"WantUint", "a non-negative integer", "negatif olmayan bir tam sayı", "عدد صحيح غير سالب"},
	mWantKind:       {"WantKind", `"opening", "reroll" or "turn"`, `"opening", "reroll" ya da "turn"`, `إحدى القيم "opening" أو "reroll" أو "turn"`},
	mWantSecondFrom: {"WantSecondFrom", `"client" or "server"`, `"client" ya da "server"`, `إحدى القيمتين "client" أو "server"`},
	mWantFormat:     {"WantFormat", `the value "dice-proof-v1"`, `"dice-proof-v1" değeri`, `القيمة "dice-proof-v1"`},
	mWantScheme: {"WantScheme", `one of "tavlarena-v1", "anchored-v1", "per-roll-v1"`,
		`"tavlarena-v1", "anchored-v1" ya da "per-roll-v1"`,
		`إحدى القيم "tavlarena-v1" أو "anchored-v1" أو "per-roll-v1"`},
	mWantOpening:  {"WantOpening", `"western" or "turkish-reroll"`, `"western" ya da "turkish-reroll"`, `إحدى القيمتين "western" أو "turkish-reroll"`},
	mWantOpponent: {"WantOpponent", `"human" or "computer"`, `"human" ya da "computer"`, `إحدى القيمتين "human" أو "computer"`},
	mWantToken: {"WantToken", "a string of 1 to 256 bytes of UTF-8",
		"1 ile 256 bayt arası UTF-8 bir metin",
		"نص UTF-8 طوله من 1 إلى 256 بايت"},
	mWantTime: {"WantTime", "an RFC 3339 time such as 2026-11-30T10:37:31.123Z",
		"2026-11-30T10:37:31.123Z gibi bir RFC 3339 zamanı",
		"وقت بصيغة RFC 3339 مثل 2026-11-30T10:37:31.123Z"},
	mWantCheckpoint: {"WantCheckpoint", "a signed checkpoint note (C2SP tlog-checkpoint)",
		"imzalı bir kontrol noktası notu (C2SP tlog-checkpoint)",
		"ملاحظة نقطة تحقق موقّعة (C2SP tlog-checkpoint)"},
	mWantEntries: {"WantEntries", "an array of at least one entry", "en az bir girdi içeren bir dizi", "مصفوفة فيها مُدخل واحد على الأقل"},
	mWantLeaf: {"WantLeaf", "the leaf as a string of 1 to 65535 bytes",
		"1 ile 65535 bayt arası bir metin olarak yaprak",
		"الورقة نصًا طوله من 1 إلى 65535 بايت"},
	mWantProof: {"WantProof", "an array of at most 64 positions in log.hashes",
		"log.hashes içinde en çok 64 konumdan oluşan bir dizi",
		"مصفوفة من 64 موضعًا على الأكثر في log.hashes"},
	mWantHashRef: {"WantHashRef", "a position in log.hashes", "log.hashes içinde bir konum", "موضع في log.hashes"},
	mInDupHash: {"InDupHash", "field %[1]s repeats log.hashes[%[2]d]: each hash is listed once",
		"%[1]s alanı log.hashes[%[2]d] değerini tekrarlıyor: her özet bir kez listelenir",
		"الحقل %[1]s يكرر log.hashes[%[2]d]: تُدرج كل تجزئة مرة واحدة"},
	mInUnusedHash: {"InUnusedHash", "field %[1]s is used by no inclusion proof: the table lists only the hashes the proofs use",
		"%[1]s alanını hiçbir dahil olma kanıtı kullanmıyor: tablo yalnızca kanıtların kullandığı özetleri içerir",
		"الحقل %[1]s لا يستعمله أي إثبات إدراج: لا يضم الجدول إلا التجزئات التي تستعملها الإثباتات"},
	mInTlogProof: {"InTlogProof", "not a well-formed C2SP tlog-proof@v1 file",
		"düzgün biçimli bir C2SP tlog-proof@v1 dosyası değil",
		"ليس ملف C2SP tlog-proof@v1 سليم الصيغة"},
	mInTlogNoExtra: {"InTlogNoExtra", "the tlog-proof has no extra line and no leaf file was given: zarlog's tlog-proofs carry the event's leaf in extra",
		"tlog-proof dosyasında extra satırı yok ve yaprak dosyası verilmedi: zarlog'un tlog-proof dosyaları olayın yaprağını extra satırında taşır",
		"لا يحوي ملف tlog-proof السطر extra ولم يُعطَ ملف الورقة: تحمل ملفات tlog-proof من zarlog ورقة الحدث في السطر extra"},
	mInTlogLeafDiffers: {"InTlogLeafDiffers", "the leaf file given is not the leaf in the tlog-proof's extra line",
		"verilen yaprak dosyası, tlog-proof dosyasının extra satırındaki yaprakla aynı değil",
		"ملف الورقة المعطى ليس الورقة التي في السطر extra من ملف tlog-proof"},
	mInTlogNotEvent: {"InTlogNotEvent", "the tlog-proof's leaf is not a zarlog event (%[1]s: %[2]s)",
		"tlog-proof dosyasının yaprağı bir zarlog olayı değil (%[1]s: %[2]s)",
		"ورقة ملف tlog-proof ليست حدثًا من zarlog (%[1]s: %[2]s)"},

	mFmtTavlarena: {"FmtTavlarena", "a dice-proof-v1 evidence file, scheme tavlarena-v1, game %[1]s, %[2]d rolls",
		"dice-proof-v1 kanıt dosyası, tavlarena-v1 yöntemi, oyun %[1]s, %[2]d atış",
		"ملف إثبات dice-proof-v1 بالطريقة tavlarena-v1، اللعبة %[1]s، عدد الرميات %[2]d"},
	mFmtAnchored: {"FmtAnchored", "a dice-proof-v1 evidence file, scheme anchored-v1, match %[1]q game %[2]d, %[3]d rolls",
		"dice-proof-v1 kanıt dosyası, anchored-v1 yöntemi, maç %[1]q oyun %[2]d, %[3]d atış",
		"ملف إثبات dice-proof-v1 بالطريقة anchored-v1، المباراة %[1]q اللعبة رقم %[2]d، عدد الرميات %[3]d"},
	mFmtPerRoll: {"FmtPerRoll", "a dice-proof-v1 evidence file, scheme per-roll-v1, match %[1]s, %[2]d rolls",
		"dice-proof-v1 kanıt dosyası, per-roll-v1 yöntemi, maç %[1]s, %[2]d atış",
		"ملف إثبات dice-proof-v1 بالطريقة per-roll-v1، المباراة %[1]s، عدد الرميات %[2]d"},
	mFmtBundle: {"FmtBundle", "%[1]s; a proof bundle with %[2]d log entries",
		"%[1]s; %[2]d kayıt defteri girdisi içeren bir kanıt paketi",
		"حزمة إثبات فيها %[2]d من مُدخلات السجل: %[1]s"},
	mFmtTlog: {"FmtTlog", "a C2SP tlog-proof of one event: %[1]s of game %[2]s, seq %[3]d",
		"tek bir olayın C2SP tlog-proof kanıtı: %[2]s oyununun %[1]s olayı, sıra no %[3]d",
		"إثبات C2SP tlog-proof لحدث واحد: الحدث %[1]s من اللعبة %[2]s، رقمه التسلسلي %[3]d"},
	mSkNoValues: {"SkNoValues", "not checked: the values could not be taken from the logged events (see log-order and log-agreement)",
		"kontrol edilmedi: değerler kayıt defterindeki olaylardan alınamadı (bkz. «kayıt defterindeki sıra» ve «kayıt defteriyle uyum» kontrolleri)",
		"لم يُفحص: تعذّر أخذ القيم من الأحداث المسجلة (انظر فحصَي «الترتيب في السجل» و«التوافق مع السجل»)"},

	mCmTavPass: {"CmTavPass", "the revealed seed, with the game id, the settings and the seats, gives the commitment %[1]s (seal code %[2]s)",
		"açıklanan tohum; oyun kimliği, ayarlar ve koltuklarla birlikte %[1]s taahhüdünü veriyor (mühür kodu %[2]s)",
		"البذرة المكشوفة، مع معرّف اللعبة والإعدادات والمقعدين، تعطي الالتزام %[1]s (رمز الختم %[2]s)"},
	mCmTavFail: {"CmTavFail", "the revealed seed, with the game id, the settings and the seats, gives %[1]s (seal code %[2]s), but the file's commitment is %[3]s (seal code %[4]s)",
		"açıklanan tohum; oyun kimliği, ayarlar ve koltuklarla birlikte %[1]s veriyor (mühür kodu %[2]s), ama dosyadaki taahhüt %[3]s (mühür kodu %[4]s)",
		"البذرة المكشوفة، مع معرّف اللعبة والإعدادات والمقعدين، تعطي %[1]s (رمز الختم %[2]s)، لكن الالتزام في الملف هو %[3]s (رمز الختم %[4]s)"},
	mCmAncPass: {"CmAncPass", "SHA-256 of the revealed seed is the fingerprint %[1]s",
		"açıklanan tohumun SHA-256 özeti, parmak izi %[1]s ile aynı",
		"تجزئة SHA-256 للبذرة المكشوفة هي البصمة %[1]s"},
	mCmAncFail: {"CmAncFail", "SHA-256 of the revealed seed is %[1]s, but the fingerprint is %[2]s",
		"açıklanan tohumun SHA-256 özeti %[1]s, ama parmak izi %[2]s",
		"تجزئة SHA-256 للبذرة المكشوفة هي %[1]s، لكن البصمة هي %[2]s"},
	mCmPerPass: {"CmPerPass", "each of the %[1]d revealed seeds matches its commitment",
		"açıklanan %[1]d tohumun her biri kendi taahhüdüne uyuyor",
		"كل بذرة من البذور المكشوفة (وعددها %[1]d) تطابق التزامها"},
	mCmPerNone: {"CmPerNone", "there are no rolls, so no commitments to check",
		"atış yok, dolayısıyla kontrol edilecek taahhüt de yok",
		"لا توجد رميات، فلا التزامات للتحقق منها"},
	mCmPerFail: {"CmPerFail", "%[1]d of %[2]d seeds do not match their commitment; the first is roll %[3]d (roll id %[4]s): SHA-256 of its seed is %[5]s, but its commitment is %[6]s",
		"%[2]d tohumdan %[1]d tanesi taahhüdüne uymuyor; ilki %[3]d. atış (atış kimliği %[4]s): tohumunun SHA-256 özeti %[5]s, ama taahhüdü %[6]s",
		"عدد البذور التي لا تطابق التزامها %[1]d من %[2]d؛ أولها الرمية %[3]d (معرّف الرمية %[4]s): تجزئة SHA-256 لبذرتها هي %[5]s، لكن التزامها هو %[6]s"},

	mExSkipTav: {"ExSkipTav", "the seal code you saw before the game was not given: compare the seal code %[1]s with it",
		"oyundan önce gördüğün mühür kodu verilmedi: %[1]s mühür kodunu onunla karşılaştır",
		"لم يُعطَ رمز الختم الذي رأيته قبل اللعبة: قارن رمز الختم %[1]s به"},
	mExSkipAnc: {"ExSkipAnc", "the fingerprint you saw before the game was not given: compare the fingerprint (seal code %[1]s) with it",
		"oyundan önce gördüğün parmak izi verilmedi: parmak izini (mühür kodu %[1]s) onunla karşılaştır",
		"لم تُعطَ البصمة التي رأيتها قبل اللعبة: قارن البصمة (رمز الختم %[1]s) بها"},
	mExSkipPer: {"ExSkipPer", "no seal code you saw was given",
		"gördüğün bir mühür kodu verilmedi",
		"لم يُعطَ رمز ختم رأيته"},
	mExPass: {"ExPass", "the commitment %[1]s matches the one you gave (%[2]s)",
		"%[1]s taahhüdü verdiğin değerle (%[2]s) eşleşiyor",
		"الالتزام %[1]s يطابق ما أعطيته (%[2]s)"},
	mExFail: {"ExFail", "you gave %[1]s, but the file's commitment is %[2]s (seal code %[3]s)",
		"verdiğin değer %[1]s, ama dosyadaki taahhüt %[2]s (mühür kodu %[3]s)",
		"أعطيت %[1]s، لكن الالتزام في الملف هو %[2]s (رمز الختم %[3]s)"},
	mExAncPass: {"ExAncPass", "the fingerprint %[1]s matches the one you gave (%[2]s)",
		"%[1]s parmak izi verdiğin değerle (%[2]s) eşleşiyor",
		"البصمة %[1]s تطابق ما أعطيته (%[2]s)"},
	mExAncFail: {"ExAncFail", "you gave %[1]s, but the fingerprint is %[2]s (seal code %[3]s)",
		"verdiğin değer %[1]s, ama parmak izi %[2]s (mühür kodu %[3]s)",
		"أعطيت %[1]s، لكن البصمة هي %[2]s (رمز الختم %[3]s)"},
	mExPerPass: {"ExPerPass", "roll %[1]d (roll id %[2]s) has the commitment you gave (%[3]s)",
		"%[1]d. atış (atış kimliği %[2]s) verdiğin taahhüde (%[3]s) sahip",
		"الرمية %[1]d (معرّف الرمية %[2]s) لها الالتزام الذي أعطيته (%[3]s)"},
	mExPerFail: {"ExPerFail", "no roll of this match has the commitment you gave (%[1]s)",
		"bu maçın hiçbir atışı verdiğin taahhüde (%[1]s) sahip değil",
		"لا توجد في هذه المباراة رمية لها الالتزام الذي أعطيته (%[1]s)"},

	mAnPass: {"AnPass", "drand quicknet round %[1]d: the signature verifies, the randomness is SHA-256 of the signature, and the round was published at %[2]s, after the game was sealed at %[3]s",
		"drand quicknet turu %[1]d: imza doğrulandı, rastgelelik imzanın SHA-256 özeti, ve tur oyunun mühürlendiği %[3]s anından sonra, %[2]s anında yayımlandı",
		"جولة drand quicknet رقم %[1]d: التوقيع صحيح، والعشوائية هي تجزئة SHA-256 للتوقيع، ونُشرت الجولة في %[2]s بعد ختم اللعبة في %[3]s"},
	mAnFail: {"AnFail", "drand round %[1]d: %[2]s", "drand turu %[1]d: %[2]s", "جولة drand رقم %[1]d: %[2]s"},
	mAnUnknownChain: {"AnUnknownChain", "the chain %[1]s is not a known drand chain (only quicknet, %[2]s, is accepted)",
		"%[1]s zinciri bilinen bir drand zinciri değil (yalnızca quicknet, %[2]s, kabul edilir)",
		"السلسلة %[1]s ليست سلسلة drand معروفة (لا تُقبل إلا quicknet، %[2]s)"},
	mAnRoundZero: {"AnRoundZero", "round 0 does not exist (rounds start at 1)", "0 numaralı tur yoktur (turlar 1'den başlar)", "الجولة 0 غير موجودة (تبدأ الجولات من 1)"},
	mAnBadSig: {"AnBadSig", "the signature is not the chain's signature of this round",
		"imza, zincirin bu tur için attığı imza değil",
		"التوقيع ليس توقيع السلسلة لهذه الجولة"},
	mAnBadRand: {"AnBadRand", "the randomness %[1]s is not SHA-256 of the signature (%[2]s)",
		"%[1]s rastgeleliği imzanın SHA-256 özeti (%[2]s) değil",
		"العشوائية %[1]s ليست تجزئة SHA-256 للتوقيع (%[2]s)"},
	mAnExisted: {"AnExisted", "the round was published at %[1]s, not after the game was sealed at %[2]s",
		"tur %[1]s anında yayımlandı, oyunun mühürlendiği %[2]s anından sonra değil",
		"نُشرت الجولة في %[1]s، أي ليس بعد ختم اللعبة في %[2]s"},

	mRoPass: {"RoPass", "all %[1]d rolls recomputed from the seed match the dice played",
		"tohumdan yeniden hesaplanan %[1]d atışın hepsi oynanan zarlarla aynı",
		"أُعيد حساب الرميات كلها من البذرة (وعددها %[1]d) وكلها تطابق النرد الذي لُعب"},
	mRoNone: {"RoNone", "there are no rolls to recompute", "yeniden hesaplanacak atış yok", "لا توجد رميات لإعادة حسابها"},
	mRoFail: {"RoFail", "%[1]d of %[2]d rolls do not match; the first is roll %[3]d: the file says %[4]s, the seed gives %[5]s",
		"%[2]d atıştan %[1]d tanesi tutmuyor; ilki %[3]d. atış: dosyada %[4]s yazıyor, tohum %[5]s veriyor",
		"عدد الرميات التي لا تطابق %[1]d من %[2]d؛ أولها الرمية %[3]d: في الملف %[4]s، والبذرة تعطي %[5]s"},
	mRoFailPer: {"RoFailPer", "%[1]d of %[2]d rolls do not match; the first is roll %[3]d (roll id %[4]s): the file says %[5]s, the seed gives %[6]s",
		"%[2]d atıştan %[1]d tanesi tutmuyor; ilki %[3]d. atış (atış kimliği %[4]s): dosyada %[5]s yazıyor, tohum %[6]s veriyor",
		"عدد الرميات التي لا تطابق %[1]d من %[2]d؛ أولها الرمية %[3]d (معرّف الرمية %[4]s): في الملف %[5]s، والبذرة تعطي %[6]s"},

	mSqPass: {"SqPass", "%[1]d rolls numbered 0 to %[2]d without gaps, opening ties rolled again; %[3]s",
		"%[1]d atış 0 ile %[2]d arasında boşluksuz numaralanmış, açılıştaki beraberlikler yeniden atılmış; %[3]s",
		"الرميات (وعددها %[1]d) مرقّمة من 0 إلى %[2]d بلا فجوات، وأُعيد رمي كل تعادل في الافتتاح؛ %[3]s"},
	mSqWestern:        {"SqWestern", "western opening, no re-roll", "batı usulü açılış, yeniden atış yok", "افتتاح على الطريقة الغربية بلا إعادة رمي"},
	mSqTurkishDone:    {"SqTurkishDone", "exactly one re-roll by the starter (turkish-reroll)", "başlayan oyuncunun tam bir yeniden atışı var (Türk kuralı)", "إعادة رمي واحدة بالضبط من اللاعب البادئ (القاعدة التركية)"},
	mSqTurkishPending: {"SqTurkishPending", "the game ended before the re-roll (turkish-reroll)", "oyun yeniden atıştan önce bitti (Türk kuralı)", "انتهت اللعبة قبل إعادة الرمي (القاعدة التركية)"},
	mSqOpeningPending: {"SqOpeningPending", "the game ended during the opening", "oyun açılış sırasında bitti", "انتهت اللعبة أثناء الافتتاح"},
	mSqNone:           {"SqNone", "there are no rolls", "hiç atış yok", "لا توجد رميات"},
	mSqGap: {"SqGap", "roll %[1]d is numbered n=%[2]d in the file, but n=%[3]d is due: the file numbers its rolls from n=0, without gaps",
		"%[1]d. atış dosyada n=%[2]d olarak numaralanmış, ama sıradaki n=%[3]d: dosya atışlarını n=0'dan başlayarak boşluksuz numaralar",
		"الرمية %[1]d رقمها في الملف n=%[2]d، والمنتظر n=%[3]d: يرقّم الملف رمياته من n=0 بلا فجوات"},
	mSqKind: {"SqKind", "roll %[1]d is marked %[2]s, but %[3]s is due: %[4]s",
		"%[1]d. atış %[2]s olarak işaretlenmiş, ama sırada %[3]s var: %[4]s",
		"الرمية %[1]d موسومة %[2]s، والمنتظر %[3]s: %[4]s"},
	mSqWhyFirst:     {"SqWhyFirst", "a game starts with an opening roll", "oyun bir açılış atışıyla başlar", "تبدأ اللعبة برمية افتتاح"},
	mSqWhyTie:       {"SqWhyTie", "the opening was a tie, so it is rolled again", "açılış berabere bitti, bu yüzden yeniden atılır", "انتهى الافتتاح بالتعادل، فيُعاد رميه"},
	mSqWhyReroll:    {"SqWhyReroll", "under turkish-reroll the starter rolls again after the opening", "Türk kuralında başlayan oyuncu açılıştan sonra yeniden atar", "في القاعدة التركية يرمي اللاعب البادئ مرة أخرى بعد الافتتاح"},
	mSqWhyOneReroll: {"SqWhyOneReroll", "there is exactly one re-roll, and only under turkish-reroll", "yeniden atış yalnızca Türk kuralında ve tam bir kez yapılır", "إعادة الرمي مرة واحدة بالضبط، وفي القاعدة التركية وحدها"},
	mSqWhyDecided:   {"SqWhyDecided", "the opening was already decided", "açılış zaten belli olmuştu", "كان الافتتاح قد حُسم"},
	mKindOpening:    {"KindOpening", `"opening"`, `"opening" (açılış)`, `"opening" (افتتاح)`},
	mKindReroll:     {"KindReroll", `"reroll"`, `"reroll" (yeniden atış)`, `"reroll" (إعادة رمي)`},
	mKindTurn:       {"KindTurn", `"turn"`, `"turn" (sıra atışı)`, `"turn" (رمية دور)`},
	mSqPerPass: {"SqPerPass", "the %[1]d roll ids are all different",
		"%[1]d atış kimliğinin hepsi birbirinden farklı",
		"معرّفات الرميات (وعددها %[1]d) كلها مختلفة"},
	mSqPerDup: {"SqPerDup", "roll %[1]d repeats the roll id %[2]s of roll %[3]d",
		"%[1]d. atış, %[3]d. atışın atış kimliğini (%[2]s) tekrarlıyor",
		"الرمية %[1]d تكرر معرّف الرمية %[2]s الخاص بالرمية %[3]d"},

	mLgNoLog: {"LgNoLog", "the file has no log member: it is an evidence file, not a proof bundle from the log",
		"dosyada log üyesi yok: bu bir kanıt dosyası, kayıt defterinden gelen bir kanıt paketi değil",
		"لا يحوي الملف العضو log: إنه ملف إثبات، لا حزمة إثبات من السجل"},
	mLgKeyNoLog: {"LgKeyNoLog", "a log key was given, but the file has no log member: nothing ties this game to that log",
		"bir kayıt defteri anahtarı verildi, ama dosyada log üyesi yok: bu oyunu o kayıt defterine bağlayan hiçbir şey yok",
		"أُعطي مفتاح سجل، لكن الملف لا يحوي العضو log: لا شيء يربط هذه اللعبة بذلك السجل"},
	mLgPolicyNoLog: {"LgPolicyNoLog", "a witness policy was given, but the file has no log member: there is no checkpoint for witnesses to have cosigned",
		"bir tanık politikası verildi, ama dosyada log üyesi yok: tanıkların ortak imzalamış olabileceği bir kontrol noktası yok",
		"أُعطيت سياسة شهود، لكن الملف لا يحوي العضو log: لا توجد نقطة تحقق يمكن أن يكون الشهود قد وقّعوها"},
	mLgEmitterNoLog: {"LgEmitterNoLog", "a game server's key was given, but the file has no log member: it holds no signed events",
		"bir oyun sunucusunun anahtarı verildi, ama dosyada log üyesi yok: dosyada imzalı olay yok",
		"أُعطي مفتاح خادم لعبة، لكن الملف لا يحوي العضو log: ليس فيه أحداث موقّعة"},

	mLiPass: {"LiPass", "all %[1]d entries are in the checkpoint's tree of %[2]d leaves (root %[3]s)",
		"%[1]d girdinin hepsi kontrol noktasının %[2]d yapraklı ağacında (kök %[3]s)",
		"المُدخلات كلها (وعددها %[1]d) موجودة في شجرة نقطة التحقق ذات %[2]d ورقة (الجذر %[3]s)"},
	mLiBeyond: {"LiBeyond", "%[1]s has index %[2]d, but the checkpoint's tree has only %[3]d leaves",
		"%[1]s girdisinin indeksi %[2]d, ama kontrol noktasının ağacında yalnızca %[3]d yaprak var",
		"المُدخل %[1]s فهرسه %[2]d، لكن شجرة نقطة التحقق فيها %[3]d ورقة فقط"},
	mLiLength: {"LiLength", "%[1]s (index %[2]d) has an inclusion proof of %[3]d hashes, but a leaf at that index in a tree of %[5]d leaves needs %[4]d",
		"%[1]s girdisinin (indeks %[2]d) dahil olma kanıtında %[3]d özet var, ama %[5]d yapraklı bir ağaçta o indeksteki yaprak %[4]d özet gerektirir",
		"إثبات إدراج المُدخل %[1]s (الفهرس %[2]d) فيه %[3]d تجزئة، لكن ورقة في هذا الفهرس من شجرة ذات %[5]d ورقة تحتاج إلى %[4]d"},
	mLiFail: {"LiFail", "%[1]s (index %[2]d): its inclusion proof does not lead to the checkpoint's root (tree of %[3]d leaves): the leaf or the proof was changed, or the checkpoint is not the one the proofs were made for",
		"%[1]s (indeks %[2]d): dahil olma kanıtı kontrol noktasının köküne varmıyor (%[3]d yapraklı ağaç): yaprak ya da kanıt değiştirilmiş, ya da kontrol noktası kanıtların yapıldığı nokta değil",
		"المُدخل %[1]s (الفهرس %[2]d): إثبات إدراجه لا يوصل إلى جذر نقطة التحقق (شجرة ذات %[3]d ورقة): غُيّرت الورقة أو الإثبات، أو أن نقطة التحقق ليست التي صُنعت لها الإثباتات"},
	mLiTlogPass: {"LiTlogPass", "the leaf of the extra line is at index %[1]d of the checkpoint's tree of %[2]d leaves (root %[3]s)",
		"extra satırındaki yaprak, kontrol noktasının %[2]d yapraklı ağacında %[1]d indeksinde (kök %[3]s)",
		"ورقة السطر extra موجودة في الفهرس %[1]d من شجرة نقطة التحقق ذات %[2]d ورقة (الجذر %[3]s)"},
	mLsOrigin: {"LsOrigin", "the checkpoint is of the log %[1]q, not of the log %[2]q whose key was given",
		"kontrol noktası %[1]q kayıt defterine ait, anahtarı verilen %[2]q kayıt defterine değil",
		"نقطة التحقق من السجل %[1]q، لا من السجل %[2]q الذي أُعطي مفتاحه"},
	mLsBad: {"LsBad", "the checkpoint has no valid signature by the log key %[1]s",
		"kontrol noktasında %[1]s kayıt defteri anahtarının geçerli bir imzası yok",
		"لا تحمل نقطة التحقق توقيعًا صحيحًا بمفتاح السجل %[1]s"},
	mLsPass: {"LsPass", "the checkpoint (tree of %[2]d leaves) is signed by the log key %[1]s",
		"kontrol noktası (%[2]d yapraklı ağaç) %[1]s kayıt defteri anahtarıyla imzalı",
		"نقطة التحقق (شجرة ذات %[2]d ورقة) موقّعة بمفتاح السجل %[1]s"},
	mLsPolicyPass: {"LsPolicyPass", "the checkpoint (tree of %[2]d leaves) is signed by the log %[1]s of the witness policy",
		"kontrol noktası (%[2]d yapraklı ağaç) tanık politikasındaki %[1]s kayıt defterince imzalı",
		"نقطة التحقق (شجرة ذات %[2]d ورقة) موقّعة من السجل %[1]s المذكور في سياسة الشهود"},
	mLsPolicyFail: {"LsPolicyFail", "the checkpoint of the log %[1]q is signed by none of the %[2]d logs of the witness policy",
		"%[1]q kayıt defterinin kontrol noktası, tanık politikasındaki %[2]d kayıt defterinin hiçbirince imzalanmamış",
		"نقطة التحقق الخاصة بالسجل %[1]q غير موقّعة من أي من سجلات سياسة الشهود (وعددها %[2]d)"},
	mLsNoKey: {"LsNoKey", "not checked: no log key was given, so nothing ties this checkpoint to a log; the inclusion proofs were checked against its root as written",
		"kontrol edilmedi: kayıt defteri anahtarı verilmedi, dolayısıyla bu kontrol noktasını bir kayıt defterine bağlayan hiçbir şey yok; dahil olma kanıtları, yazılı olan köke göre kontrol edildi",
		"لم يُفحص: لم يُعطَ مفتاح السجل، فلا شيء يربط نقطة التحقق هذه بسجل؛ وقد فُحصت إثباتات الإدراج مقابل جذرها كما هو مكتوب"},
	mLsTlogNoKey: {"LsTlogNoKey", "no log key was given: an inclusion proof proves nothing without the log's signature",
		"kayıt defteri anahtarı verilmedi: dahil olma kanıtı, kayıt defterinin imzası olmadan hiçbir şey kanıtlamaz",
		"لم يُعطَ مفتاح السجل: إثبات الإدراج لا يثبت شيئًا دون توقيع السجل"},
	mLwNone: {"LwNone", "not checked: no witness policy was given",
		"kontrol edilmedi: tanık politikası verilmedi",
		"لم يُفحص: لم تُعطَ سياسة شهود"},
	mLwBadCosig: {"LwBadCosig", "a witness of the policy has an invalid cosignature on the checkpoint",
		"politikadaki bir tanığın kontrol noktası üzerindeki ortak imzası geçersiz",
		"أحد شهود السياسة له توقيع مشترك غير صحيح على نقطة التحقق"},
	mLwQuorum: {"LwQuorum", "the policy's quorum is not met: %[1]d of the %[2]d in its list of witnesses cosigned the checkpoint",
		"politikanın yeter sayısı sağlanmadı: %[2]d tanıktan %[1]d tanesi kontrol noktasını ortak imzaladı",
		"لم يتحقق النصاب الذي تطلبه السياسة: وقّع نقطة التحقق %[1]d من شهودها البالغ عددهم %[2]d"},
	mLwNotYet: {"LwNotYet", "none of the %[1]d in the policy's list of witnesses cosigned the checkpoint: the game is not witnessed yet. A log has its checkpoints witnessed at intervals (a minute by default); get the game's bundle again from the log a minute or two after the game's end",
		"politikanın %[1]d tanığından hiçbiri kontrol noktasını ortak imzalamadı: oyun henüz tanıklanmadı. Kayıt defteri kontrol noktalarını aralıklarla (varsayılan olarak dakikada bir) tanıklatır; oyunun kanıt paketini, oyunun bitişinden bir iki dakika sonra kayıt defterinden yeniden al",
		"لم يوقّع أيٌّ من شهود السياسة البالغ عددهم %[1]d نقطة التحقق: لم يُشهد على اللعبة بعد. يُشهد السجل على نقاط تحققه على فترات (دقيقة واحدة افتراضيًا)؛ نزّل حزمة إثبات اللعبة من السجل مرة أخرى بعد دقيقة أو دقيقتين من نهاية اللعبة"},
	mLwPass: {"LwPass", "%[1]d of the %[2]d in the policy's list of witnesses cosigned the checkpoint: the quorum is met",
		"politikanın %[2]d tanığından %[1]d tanesi kontrol noktasını ortak imzaladı: yeter sayı sağlandı",
		"وقّع نقطة التحقق %[1]d من شهود السياسة البالغ عددهم %[2]d: تحقق النصاب"},
	mLoIndex: {"LoIndex", "log.entries[%[1]d] (index %[2]d) does not come after log.entries[%[3]d] (index %[4]d): the entries must be in log order, each leaf once",
		"log.entries[%[1]d] (indeks %[2]d), log.entries[%[3]d] (indeks %[4]d) girdisinden sonra gelmiyor: girdiler kayıt defterindeki sırada olmalı, her yaprak bir kez",
		"المُدخل log.entries[%[1]d] (الفهرس %[2]d) لا يأتي بعد log.entries[%[3]d] (الفهرس %[4]d): يجب أن تكون المُدخلات بترتيب السجل، وكل ورقة مرة واحدة"},
	mLoNotEvent: {"LoNotEvent", "log.entries[%[1]d].leaf is not a zarlog event (%[2]s %[3]s)",
		"log.entries[%[1]d].leaf bir zarlog olayı değil (%[2]s %[3]s)",
		"الورقة log.entries[%[1]d].leaf ليست حدثًا من zarlog (%[2]s %[3]s)"},
	mLoNoCommit: {"LoNoCommit", "no entry is a commit: the bundle does not hold the game from its start",
		"hiçbir girdi bir taahhüt olayı değil: paket oyunu başından itibaren içermiyor",
		"لا يوجد بين المُدخلات حدث الالتزام: لا تحوي الحزمة اللعبة من بدايتها"},
	mLoForeign: {"LoForeign", "log.entries[%[1]d] is an event of game %[2]q, not of this game (%[3]q)",
		"log.entries[%[1]d] bu oyunun (%[3]q) değil, %[2]q oyununun olayı",
		"المُدخل log.entries[%[1]d] حدث من اللعبة %[2]q، لا من هذه اللعبة (%[3]q)"},
	mLoBeforeCommit: {"LoBeforeCommit", "log.entries[%[1]d] (%[2]s, seq %[3]d, index %[4]d) comes before the game's commit (index %[5]d) in the log: the commitment must be logged before every contribution and roll",
		"log.entries[%[1]d] (%[2]s, sıra no %[3]d, indeks %[4]d) kayıt defterinde oyunun taahhüt olayından (indeks %[5]d) önce geliyor: taahhüt her katkıdan ve her atıştan önce kaydedilmeli",
		"المُدخل log.entries[%[1]d] (%[2]s، التسلسل %[3]d، الفهرس %[4]d) يأتي في السجل قبل حدث الالتزام الخاص باللعبة (الفهرس %[5]d): يجب تسجيل الالتزام قبل كل مساهمة وكل رمية"},
	mLoSeq: {"LoSeq", "log.entries[%[1]d] is seq %[2]d, but seq %[3]d is due: the entries must be every event of the game from seq 0, each once",
		"log.entries[%[1]d] için sıra no %[2]d, ama sıradaki sıra no %[3]d: girdiler oyunun sıra no 0'dan itibaren bütün olayları olmalı, her biri bir kez",
		"المُدخل log.entries[%[1]d] رقمه التسلسلي %[2]d، والمنتظر %[3]d: يجب أن تكون المُدخلات كل أحداث اللعبة بدءًا من التسلسل 0، كلًا منها مرة واحدة"},
	mLoTokenAfterBeacon: {"LoTokenAfterBeacon", "log.entries[%[1]d] (a token, index %[2]d) comes after the drand beacon (index %[3]d): both tokens must be logged before the beacon",
		"log.entries[%[1]d] (bir oyuncu tanıtıcısı, indeks %[2]d) drand işaretinden (indeks %[3]d) sonra geliyor: iki tanıtıcı da işaretten önce kaydedilmeli",
		"المُدخل log.entries[%[1]d] (رمز لاعب، الفهرس %[2]d) يأتي بعد إشارة drand (الفهرس %[3]d): يجب تسجيل الرمزين كليهما قبل الإشارة"},
	mLoNotFinal: {"LoNotFinal", "the last entry is seq %[1]d (%[2]s), not the game's final event (%[3]s): the bundle does not hold the whole game",
		"son girdi sıra no %[1]d (%[2]s), oyunun son olayı (%[3]s) değil: paket oyunun tamamını içermiyor",
		"المُدخل الأخير رقمه التسلسلي %[1]d (%[2]s)، وليس الحدث الختامي للعبة (%[3]s): لا تحوي الحزمة اللعبة كلها"},
	mLoPass: {"LoPass", "the %[1]d entries are the events of game %[2]q, seq 0 to %[3]d, in log order; the commit (index %[4]d) comes first",
		"%[1]d girdi, %[2]q oyununun sıra no 0 ile %[3]d arasındaki olayları, kayıt defteri sırasında; taahhüt olayı (indeks %[4]d) ilk sırada",
		"المُدخلات (وعددها %[1]d) هي أحداث اللعبة %[2]q من التسلسل 0 إلى %[3]d بترتيب السجل؛ وحدث الالتزام (الفهرس %[4]d) أولها"},
	mLaNotOrdered: {"LaNotOrdered", "not checked: the entries are not the game's events in order (see log-order)",
		"kontrol edilmedi: girdiler oyunun sıralı olayları değil (bkz. «kayıt defterindeki sıra» kontrolü)",
		"لم يُفحص: المُدخلات ليست أحداث اللعبة بترتيبها (انظر فحص «الترتيب في السجل»)"},
	mLaRefused: {"LaRefused", "log.entries[%[1]d] (seq %[2]d, %[3]s) breaks the game's rules (%[4]s %[5]s): the logged events do not make a valid game",
		"log.entries[%[1]d] (sıra no %[2]d, %[3]s) oyunun kurallarını çiğniyor (%[4]s %[5]s): kayıtlı olaylar geçerli bir oyun oluşturmuyor",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d، %[3]s) يخالف قواعد اللعبة (%[4]s %[5]s): لا تشكّل الأحداث المسجلة لعبة صحيحة"},
	mLaPass: {"LaPass", "the %[1]d logged events replay to a valid game, and the top-level fields agree with them; every check above used the values from the events",
		"kayıtlı %[1]d olay yeniden oynatıldığında geçerli bir oyun çıkıyor ve üst düzey alanlar onlarla uyuşuyor; yukarıdaki her kontrol olaylardaki değerleri kullandı",
		"الأحداث المسجلة (وعددها %[1]d) تُعاد فتعطي لعبة صحيحة، والحقول العليا توافقها؛ وقد استعمل كل فحص أعلاه القيم المأخوذة من الأحداث"},
	mLaDiffer: {"LaDiffer", "the top-level field %[1]s is %[2]s, but the logged events give %[3]s",
		"üst düzey %[1]s alanı %[2]s, ama kayıtlı olaylar %[3]s veriyor",
		"الحقل العلوي %[1]s قيمته %[2]s، لكن الأحداث المسجلة تعطي %[3]s"},
	mLaMissing: {"LaMissing", "the top-level field %[1]s is missing, but the logged events give %[2]s",
		"üst düzey %[1]s alanı eksik, ama kayıtlı olaylar %[2]s veriyor",
		"الحقل العلوي %[1]s مفقود، لكن الأحداث المسجلة تعطي %[2]s"},
	mLaExtra: {"LaExtra", "the top-level field %[1]s is %[2]s, but the logged events have no such value",
		"üst düzey %[1]s alanı %[2]s, ama kayıtlı olaylarda böyle bir değer yok",
		"الحقل العلوي %[1]s قيمته %[2]s، لكن الأحداث المسجلة ليس فيها قيمة كهذه"},
	mEoNotClosed: {"EoNotClosed", "game %[1]q is not over: its final event (reveal; per-roll-v1: end) is not logged",
		"%[1]q oyunu bitmemiş: son olayı (reveal; per-roll-v1 için end) kaydedilmemiş",
		"اللعبة %[1]q لم تنتهِ: حدثها الختامي (reveal، وفي per-roll-v1 الحدث end) غير مسجل"},
	mEoSettings: {"EoSettings", "the logged settings cannot be written in an evidence file: %[1]s is not a value SCHEMES.md §7 allows",
		"kayıtlı ayarlar bir kanıt dosyasına yazılamaz: %[1]s, SCHEMES.md §7'nin izin verdiği bir değer değil",
		"لا يمكن كتابة الإعدادات المسجلة في ملف إثبات: %[1]s ليست قيمة يسمح بها SCHEMES.md §7"},
	mEoNoBeacon: {"EoNoBeacon", "anchored-v1 game %[1]q ended without its drand beacon: its dice cannot be proved",
		"anchored-v1 oyunu %[1]q drand işareti olmadan bitti: zarları kanıtlanamaz",
		"انتهت لعبة anchored-v1 %[1]q دون إشارة drand: لا يمكن إثبات نردها"},
	mLeNone: {"LeNone", "not checked: no game server's key was given, so the signatures of the game's binding events (commit, end, reveal, roll-commit, roll-reveal) were not checked",
		"kontrol edilmedi: oyun sunucusunun anahtarı verilmedi, dolayısıyla oyunun bağlayıcı olaylarının (commit, end, reveal, roll-commit, roll-reveal) imzaları kontrol edilmedi",
		"لم يُفحص: لم يُعطَ مفتاح خادم اللعبة، فلم تُفحص تواقيع الأحداث المُلزِمة في اللعبة (commit وend وreveal وroll-commit وroll-reveal)"},
	mLeUnknown: {"LeUnknown", "none of the game servers' keys given is a key of this game's emitter %[1]q",
		"verilen oyun sunucusu anahtarlarından hiçbiri bu oyunun sunucusu %[1]q için değil",
		"لا ينتمي أي من مفاتيح خوادم اللعب المعطاة إلى خادم هذه اللعبة %[1]q"},
	mLeBad: {"LeBad", "%[1]s (seq %[2]d, %[3]s) does not carry a valid signature by a key of %[4]q",
		"%[1]s (sıra no %[2]d, %[3]s) %[4]q anahtarlarından birinin geçerli imzasını taşımıyor",
		"المُدخل %[1]s (التسلسل %[2]d، %[3]s) لا يحمل توقيعًا صحيحًا بأحد مفاتيح %[4]q"},
	mLePass: {"LePass", "the %[1]d binding events carry valid signatures by a key of the emitter %[2]q",
		"bağlayıcı %[1]d olayın hepsi %[2]q sunucusunun bir anahtarıyla geçerli biçimde imzalı",
		"الأحداث المُلزِمة (وعددها %[1]d) تحمل تواقيع صحيحة بأحد مفاتيح الخادم %[2]q"},

	mSuPass:  {"SuPass", "Every roll checked", "Her atış kontrol edildi", "تم التحقق من كل رمية"},
	mSuFail:  {"SuFail", "The proof is INVALID; failed: %[1]s", "Kanıt GEÇERSİZ; başarısız olan: %[1]s", "الإثبات غير صالح؛ فشل: %[1]s"},
	mSuInput: {"SuInput", "Bad input: this is not a dice-proof-v1 evidence file that can be checked", "Hatalı girdi: bu, kontrol edilebilecek bir dice-proof-v1 kanıt dosyası değil", "مدخلات خاطئة: هذا ليس ملف إثبات dice-proof-v1 يمكن التحقق منه"},
	mSuFailNote: {"SuFailNote", "Because a check failed, this file does not show that the dice were fair.",
		"Bir kontrol başarısız olduğu için bu dosya zarların adil olduğunu göstermez.",
		"لأن أحد الفحوص فشل، فهذا الملف لا يبيّن أن النرد كان عادلًا."},
	mSuPassNoKey: {"SuPassNoKey", "Every roll checked, but nothing ties this game to a log: no log key was given",
		"Her atış kontrol edildi, ama bu oyunu bir kayıt defterine bağlayan bir şey yok: kayıt defteri anahtarı verilmedi",
		"تم التحقق من كل رمية، لكن لا شيء يربط هذه اللعبة بسجل: لم يُعطَ مفتاح السجل"},
	mSuTlogPass: {"SuTlogPass", "The event is in the log", "Olay kayıt defterinde", "الحدث مدرج في السجل"},
	mSuInputTlog: {"SuInputTlog", "Bad input: this is not a tlog-proof of a zarlog event that can be checked",
		"Hatalı girdi: bu, kontrol edilebilecek bir zarlog olayının tlog-proof dosyası değil",
		"مدخلات خاطئة: هذا ليس ملف tlog-proof لحدث من zarlog يمكن التحقق منه"},
	mEvLine:     {"EvLine", "Event at index %[1]d: %[2]s", "%[1]d indeksindeki olay: %[2]s", "الحدث في الفهرس %[1]d: %[2]s"},
	mHProves:    {"HProves", "What this proves:", "Neyi kanıtlar:", "ما يثبته هذا الملف:"},
	mHNotProves: {"HNotProves", "What this does not prove:", "Neyi kanıtlamaz:", "ما لا يثبته:"},

	mStTavDice: {"StTavDice", "Every roll of this game is the one that the revealed seed and the two players' contributions give: no die was changed.",
		"Bu oyunun her atışı, açıklanan tohumun ve iki oyuncunun katkılarının verdiği atıştır: hiçbir zar değiştirilmemiştir.",
		"كل رمية في هذه اللعبة هي الرمية التي تعطيها البذرة المكشوفة ومساهمتا اللاعبين: لم يُغيَّر أي نرد."},
	mStSealSeen: {"StSealSeen", "The commitment is the one you gave, so the seed was fixed before the first roll and could not be changed during the game.",
		"Taahhüt verdiğin değerle aynı; demek ki tohum ilk atıştan önce belirlenmişti ve oyun sırasında değiştirilemezdi.",
		"الالتزام هو الذي أعطيته، إذن ثُبّتت البذرة قبل الرمية الأولى ولم يكن ممكنًا تغييرها أثناء اللعبة."},
	mStSealIf: {"StSealIf", "If the seal code %[1]s is the one you saw before the game, the seed was fixed before the first roll and could not be changed during the game.",
		"%[1]s mühür kodu oyundan önce gördüğün kodsa, tohum ilk atıştan önce belirlenmişti ve oyun sırasında değiştirilemezdi.",
		"إن كان رمز الختم %[1]s هو الذي رأيته قبل اللعبة، فقد ثُبّتت البذرة قبل الرمية الأولى ولم يكن ممكنًا تغييرها أثناء اللعبة."},
	mStTavPlayers: {"StTavPlayers", "Each player's contribution went into every roll, so no player could steer the dice, and the server alone could not choose them.",
		"Her oyuncunun katkısı her atışa girdi; bu yüzden hiçbir oyuncu zarları yönlendiremezdi, sunucu da tek başına seçemezdi.",
		"دخلت مساهمة كل لاعب في كل رمية، فلم يكن بوسع أي لاعب توجيه النرد، ولا بوسع الخادم وحده اختياره."},
	mStTavServerKnew: {"StTavServerKnew", "That nobody could look at the dice in advance: the server knew the secret seed during the game. It could not change the dice, but in principle it could have known them.",
		"Kimsenin zarlara önceden bakamayacağını: sunucu oyun sırasında gizli tohumu biliyordu. Zarları değiştiremezdi ama ilke olarak bilebilirdi.",
		"أن أحدًا لم يكن يستطيع رؤية النرد مسبقًا: كان الخادم يعرف البذرة السرية أثناء اللعبة. لم يكن يستطيع تغيير النرد، لكنه كان يستطيع من حيث المبدأ أن يعرفه."},
	mStNoExpected: {"StNoExpected", "That the commitment was published before the game: this check was not given the seal code you saw, and the file alone cannot show when the commitment was published.",
		"Taahhüdün oyundan önce yayımlandığını: bu kontrole gördüğün mühür kodu verilmedi ve dosya tek başına taahhüdün ne zaman yayımlandığını gösteremez.",
		"أن الالتزام نُشر قبل اللعبة: لم يُعطَ هذا الفحص رمز الختم الذي رأيته، والملف وحده لا يبيّن متى نُشر الالتزام."},
	mStNoExpectedAnc: {"StNoExpectedAnc", "That the fingerprint was published before the game: this check was not given the fingerprint you saw, and the file alone cannot show when it was published.",
		"Parmak izinin oyundan önce yayımlandığını: bu kontrole gördüğün parmak izi verilmedi ve dosya tek başına onun ne zaman yayımlandığını gösteremez.",
		"أن البصمة نُشرت قبل اللعبة: لم يُعطَ هذا الفحص البصمة التي رأيتها، والملف وحده لا يبيّن متى نُشرت."},
	mStComputerProves: {"StComputerProves", "This was a game against the computer: the dice were rolled the same way, on the player's own device.",
		"Bu, bilgisayara karşı bir oyundu: zarlar aynı yöntemle, oyuncunun kendi cihazında atıldı.",
		"كانت هذه لعبة ضد الحاسوب: رُمي النرد بالطريقة نفسها على جهاز اللاعب نفسه."},
	mStComputerPeek: {"StComputerPeek", "That the dice were hidden from the player: the secret seed was on the player's device, so whoever held the device could have looked at the dice in advance.",
		"Zarların oyuncudan gizli kaldığını: gizli tohum oyuncunun cihazındaydı; bu yüzden cihazı elinde tutan zarlara önceden bakabilirdi.",
		"أن النرد كان مخفيًا عن اللاعب: كانت البذرة السرية على جهاز اللاعب، فكان بوسع من يحمل الجهاز أن يطّلع على النرد مسبقًا."},
	mStAncDice: {"StAncDice", "The revealed seed matches the fingerprint, and every roll of this game is the one that the seed, both players' tokens and drand round %[1]d give: no die was changed.",
		"Açıklanan tohum parmak iziyle eşleşiyor ve bu oyunun her atışı; tohumun, iki oyuncunun tanıtıcılarının ve drand'ın %[1]d numaralı turunun verdiği atıştır: hiçbir zar değiştirilmemiştir.",
		"البذرة المكشوفة تطابق البصمة، وكل رمية في هذه اللعبة هي التي تعطيها البذرة ورمزا اللاعبين وجولة drand رقم %[1]d: لم يُغيَّر أي نرد."},
	mStFpSeen: {"StFpSeen", "The fingerprint is the one you gave, so the seed was already fixed when you saw it before the game.",
		"Parmak izi verdiğin değerle aynı; demek ki tohum, sen onu oyundan önce gördüğünde zaten belirlenmişti.",
		"البصمة هي التي أعطيتها، إذن كانت البذرة ثابتة حين رأيتها قبل اللعبة."},
	mStAncAnchor: {"StAncAnchor", "drand round %[1]d was published at %[2]s by independent operators, after the sealing time the record gives (%[3]s). Nobody could know it at sealing, so nobody, not the server, not a player, not the server and both players together, could choose the dice in advance.",
		"drand'ın %[1]d numaralı turu, kaydın verdiği mühürleme zamanından (%[3]s) sonra, %[2]s anında bağımsız işletmecilerce yayımlandı. Mühürleme anında kimse onu bilemezdi; bu yüzden ne sunucu, ne bir oyuncu, ne de sunucu ile iki oyuncu el ele verse zarları önceden seçebilirdi.",
		"نُشرت جولة drand رقم %[1]d في %[2]s على يد مشغّلين مستقلين، بعد وقت الختم الذي يذكره السجل (%[3]s). لم يكن أحد يعرفها لحظة الختم، فلم يكن بوسع أحد أن يختار النرد مسبقًا: لا الخادم، ولا أحد اللاعبين، ولا الخادم واللاعبان معًا."},
	mStAncServerKnew: {"StAncServerKnew", "That nobody knew the dice in advance: once round %[1]d was public, the server, which held the seed, could compute every die of the game before it was rolled.",
		"Kimsenin zarları önceden bilmediğini: %[1]d numaralı tur yayımlandıktan sonra, tohumu elinde tutan sunucu oyunun her zarını atılmadan önce hesaplayabilirdi.",
		"أن أحدًا لم يعرف النرد مسبقًا: بعد أن صارت الجولة %[1]d علنية، كان بوسع الخادم، وهو يحمل البذرة، أن يحسب كل نرد في اللعبة قبل رميه."},
	mStAncSealTime: {"StAncSealTime", "When the game was sealed: the sealing time (sealedAt), and that the fingerprint and the tokens were fixed by then, are the record's statements; this file alone cannot show them.",
		"Oyunun ne zaman mühürlendiğini: mühürleme zamanı (sealedAt) ve parmak izi ile tanıtıcıların o zamana kadar belirlenmiş olması kaydın beyanıdır; bu dosya tek başına bunları gösteremez.",
		"متى خُتمت اللعبة: وقت الختم (sealedAt)، وكون البصمة ورمزي اللاعبين ثابتة عندئذ، هي أقوال السجل؛ والملف وحده لا يستطيع أن يبيّنها."},
	mStAncAnchorComputer: {"StAncAnchorComputer", "drand round %[1]d was published at %[2]s, after the sealing time the record gives (%[3]s), so the dice could not be chosen in advance, not even on the player's device.",
		"drand'ın %[1]d numaralı turu, kaydın verdiği mühürleme zamanından (%[3]s) sonra, %[2]s anında yayımlandı; bu yüzden zarlar önceden seçilemezdi, oyuncunun cihazında bile.",
		"نُشرت جولة drand رقم %[1]d في %[2]s، بعد وقت الختم الذي يذكره السجل (%[3]s)، فلم يكن ممكنًا اختيار النرد مسبقًا، ولا حتى على جهاز اللاعب."},
	mStComputerPeekAnc: {"StComputerPeekAnc", "That the dice were hidden from the player: the seed was on the player's own device, so once round %[1]d was public, whoever held the device could have looked at the dice in advance.",
		"Zarların oyuncudan gizli kaldığını: tohum oyuncunun kendi cihazındaydı; bu yüzden %[1]d numaralı tur yayımlandıktan sonra cihazı elinde tutan zarlara önceden bakabilirdi.",
		"أن النرد كان مخفيًا عن اللاعب: كانت البذرة على جهاز اللاعب نفسه، فبعد أن صارت الجولة %[1]d علنية كان بوسع من يحمل الجهاز أن يطّلع على النرد مسبقًا."},
	mStPerDice: {"StPerDice", "Each revealed seed matches its commitment, and each roll's dice are computed from the numbers in the record (the seed, the second number, the match and roll ids): no roll was changed after it was recorded.",
		"Açıklanan her tohum kendi taahhüdüne uyuyor ve her atışın zarları kayıttaki sayılardan (tohum, ikinci sayı, maç ve atış kimlikleri) hesaplanıyor: hiçbir atış kaydedildikten sonra değiştirilmemiş.",
		"كل بذرة مكشوفة تطابق التزامها، ونرد كل رمية محسوب من الأرقام المدوّنة في السجل (البذرة والرقم الثاني ومعرّفا المباراة والرمية): لم تُغيَّر أي رمية بعد تسجيلها."},
	mStPerSeen: {"StPerSeen", "The commitment you gave is that of roll %[1]d, so that roll's seed was already fixed when you saw its commitment.",
		"Verdiğin taahhüt %[1]d. atışa ait; demek ki o atışın tohumu, sen taahhüdü gördüğünde zaten belirlenmişti.",
		"الالتزام الذي أعطيته هو التزام الرمية %[1]d، إذن كانت بذرة تلك الرمية ثابتة حين رأيت التزامها."},
	mStPerBefore: {"StPerBefore", "That each seed was fixed before its roll: the record alone cannot show it. Your app can, for the rolls you rolled yourself, because it received the commitment before the roll.",
		"Her tohumun kendi atışından önce belirlendiğini: kayıt tek başına bunu gösteremez. Senin uygulaman, kendi attığın atışlar için bunu görebilir, çünkü taahhüt ona atıştan önce ulaştı.",
		"أن كل بذرة ثُبّتت قبل رميتها: لا يبيّن السجل ذلك وحده. لكن تطبيقك يستطيع أن يتبيّنه في الرميات التي رميتها أنت، لأن الالتزام وصله قبل الرمية."},
	mStPerServer: {"StPerServer", `For the %[1]d of %[2]d rolls whose second number came from the server ("secondFrom": "server"), the record still shows that the roll was not changed after it was recorded, but it cannot show that the server did not know the roll in advance, or did not choose it.`,
		`%[2]d atıştan, ikinci sayısını sunucunun verdiği %[1]d atış için ("secondFrom": "server") kayıt, atışın kaydedildikten sonra değiştirilmediğini yine gösterir; ama sunucunun atışı önceden bilmediğini ya da seçmediğini gösteremez.`,
		`في الرميات التي أتى الخادم برقمها الثاني ("secondFrom": "server")، وعددها %[1]d من %[2]d، يظل السجل يبيّن أن الرمية لم تُغيَّر بعد تسجيلها، لكنه لا يستطيع أن يبيّن أن الخادم لم يكن يعرف الرمية سلفًا، ولا أنه لم يخترها.`},
	mStPerClientLabel: {"StPerClientLabel", `That a second number really came from the player's app: "secondFrom" is the record's statement and is not bound by any hash.`,
		`İkinci sayının gerçekten oyuncunun uygulamasından geldiğini: "secondFrom" kaydın beyanıdır ve hiçbir özete bağlı değildir.`,
		`أن الرقم الثاني أتى فعلًا من تطبيق اللاعب: الحقل "secondFrom" قول السجل، ولا تربطه أي تجزئة.`},
	mStBundle: {"StBundle", "Every value checked above was taken from this game's %[1]d events in the log (seq 0 to %[2]d), each included in the checkpoint's tree of %[3]d leaves, the commit before every other event.",
		"Yukarıda kontrol edilen her değer, bu oyunun kayıt defterindeki %[1]d olayından (sıra no 0 ile %[2]d arası) alındı; her biri kontrol noktasının %[3]d yapraklı ağacında yer alıyor ve taahhüt olayı diğer bütün olaylardan önce geliyor.",
		"أُخذت كل قيمة فُحصت أعلاه من أحداث هذه اللعبة في السجل (وعددها %[1]d، من التسلسل 0 إلى %[2]d)، وكل منها مُدرج في شجرة نقطة التحقق ذات %[3]d ورقة، وحدث الالتزام قبل سائر الأحداث."},
	mStBundleSigned: {"StBundleSigned", "The checkpoint is signed by the log key %[1]s: the log vouches for these events and their order, in which the commitment was logged before the contributions and the rolls.",
		"Kontrol noktası %[1]s kayıt defteri anahtarıyla imzalı: kayıt defteri bu olaylara ve sıralarına kefil; bu sırada taahhüt, katkılardan ve atışlardan önce kaydedilmiş.",
		"نقطة التحقق موقّعة بمفتاح السجل %[1]s: يشهد السجل بهذه الأحداث وبترتيبها، وفيه سُجّل الالتزام قبل المساهمات والرميات."},
	mStBundleNoKey: {"StBundleNoKey", "That this game is in any log: no log key was given, so the checkpoint's signature was not checked, and anyone could have built this tree.",
		"Bu oyunun herhangi bir kayıt defterinde olduğunu: kayıt defteri anahtarı verilmedi, dolayısıyla kontrol noktasının imzası kontrol edilmedi; bu ağacı herkes kurmuş olabilir.",
		"أن هذه اللعبة في أي سجل أصلًا: لم يُعطَ مفتاح السجل، فلم يُفحص توقيع نقطة التحقق، وكان بوسع أي أحد أن يبني هذه الشجرة."},
	mStBundleWitnessed: {"StBundleWitnessed", "%[1]d in your policy's list of witnesses cosigned this checkpoint, so the log showed them this same tree.",
		"Politikandaki %[1]d tanık bu kontrol noktasını ortak imzaladı; demek ki kayıt defteri onlara da aynı ağacı gösterdi.",
		"وقّع نقطة التحقق هذه %[1]d من شهود سياستك، فقد أراهم السجل الشجرة نفسها."},
	mStBundleNoWitness: {"StBundleNoWitness", "That the log shows everyone the same history: no witness policy was given, so no witness cosignature was checked.",
		"Kayıt defterinin herkese aynı geçmişi gösterdiğini: tanık politikası verilmedi, dolayısıyla hiçbir tanık imzası kontrol edilmedi.",
		"أن السجل يُري الجميع التاريخ نفسه: لم تُعطَ سياسة شهود، فلم يُفحص أي توقيع مشترك من الشهود."},
	mStBundleNotWitnessed: {"StBundleNotWitnessed", "That the log shows everyone the same history: the witness policy's quorum has not cosigned this checkpoint (yet).",
		"Kayıt defterinin herkese aynı geçmişi gösterdiğini: tanık politikasının yeter sayısı bu kontrol noktasını (henüz) ortak imzalamadı.",
		"أن السجل يُري الجميع التاريخ نفسه: لم يوقّع النصاب الذي تطلبه سياسة الشهود نقطة التحقق هذه (بعد)."},
	mStEmitterSigned: {"StEmitterSigned", "The game's binding events (its commitments, its end and its reveals) are signed by the key you gave for %[1]q, so that operator cannot deny them.",
		"Oyunun bağlayıcı olayları (taahhütleri, sonu ve açıklamaları) %[1]q için verdiğin anahtarla imzalı; bu yüzden o işletmeci onları inkâr edemez.",
		"الأحداث المُلزِمة في اللعبة (التزاماتها ونهايتها وكشوفها) موقّعة بالمفتاح الذي أعطيته للخادم %[1]q، فلا يستطيع مشغّله إنكارها."},
	mStEmitterUnchecked: {"StEmitterUnchecked", "That the operator %[1]q signed its events: its key was not given, so their signatures were not checked.",
		"%[1]q işletmecisinin olaylarını imzaladığını: anahtarı verilmedi, dolayısıyla imzaları kontrol edilmedi.",
		"أن المشغّل %[1]q وقّع أحداثه: لم يُعطَ مفتاحه، فلم تُفحص تواقيعها."},
	mStTlogIn: {"StTlogIn", "This event is at index %[1]d of the log %[3]s, in the tree of %[2]d leaves that the log's key signed.",
		"Bu olay %[3]s kayıt defterinde %[1]d indeksinde, kayıt defteri anahtarının imzaladığı %[2]d yapraklı ağaçta yer alıyor.",
		"هذا الحدث في الفهرس %[1]d من السجل %[3]s، ضمن الشجرة ذات %[2]d ورقة التي وقّعها مفتاح السجل."},
	mStTlogSigned: {"StTlogSigned", "The event is signed by the key you gave for %[1]q.",
		"Olay, %[1]q için verdiğin anahtarla imzalı.",
		"الحدث موقّع بالمفتاح الذي أعطيته للخادم %[1]q."},
	mStTlogOnly: {"StTlogOnly", "Anything about the dice of its game: one event is not the game. Verify the game's proof bundle for that.",
		"Oyununun zarları hakkında herhangi bir şeyi: tek bir olay oyunun tamamı değildir. Bunun için oyunun kanıt paketini doğrula.",
		"أي شيء عن نرد لعبته: حدث واحد ليس اللعبة كلها. تحقّق من حزمة إثبات اللعبة لذلك."},
	mStNoExpectedLog: {"StNoExpectedLog", "That the commitment is the one you saw before the game: this check was not given the seal code you saw. The log shows only that the commitment was logged before the players' contributions and the first roll.",
		"Taahhüdün oyundan önce gördüğün taahhüt olduğunu: bu kontrole gördüğün mühür kodu verilmedi. Kayıt defteri yalnızca taahhüdün oyuncuların katkılarından ve ilk atıştan önce kaydedildiğini gösterir.",
		"أن الالتزام هو الذي رأيته قبل اللعبة: لم يُعطَ هذا الفحص رمز الختم الذي رأيته. ولا يبيّن السجل إلا أن الالتزام سُجّل قبل مساهمتي اللاعبين وقبل الرمية الأولى."},
	mStNoExpectedAncLog: {"StNoExpectedAncLog", "That the fingerprint is the one you saw before the game: this check was not given it. The log shows only that the fingerprint was logged before the players' tokens and the drand beacon.",
		"Parmak izinin oyundan önce gördüğün parmak izi olduğunu: bu kontrole o verilmedi. Kayıt defteri yalnızca parmak izinin oyuncuların tanıtıcılarından ve drand işaretinden önce kaydedildiğini gösterir.",
		"أن البصمة هي التي رأيتها قبل اللعبة: لم تُعطَ لهذا الفحص. ولا يبيّن السجل إلا أن البصمة سُجّلت قبل رمزي اللاعبين وقبل إشارة drand."},

	mTitleMoves: {"TitleMoves", "moves", "hamleler", "النقلات"},
	mMvNoLog: {"MvNoLog", "not checked: a plain evidence file carries no moves; the game's proof bundle from the log does",
		"kontrol edilmedi: düz bir kanıt dosyası hamle içermez; oyunun kayıt defterinden alınan kanıt paketi içerir",
		"لم يُفحص: ملف الإثبات العادي لا يحوي النقلات؛ تحويها حزمة إثبات اللعبة المأخوذة من السجل"},
	mMvNoGame: {"MvNoGame", "not checked: the logged events do not replay to a game (see log-order and log-agreement)",
		"kontrol edilmedi: kayıtlı olaylar yeniden oynatıldığında bir oyun çıkmıyor (bkz. «kayıt defterindeki sıra» ve «kayıt defteriyle uyum» kontrolleri)",
		"لم يُفحص: الأحداث المسجلة لا تُعاد فتعطي لعبة (انظر فحصَي «الترتيب في السجل» و«التوافق مع السجل»)"},
	mMvNotLogged: {"MvNotLogged", `not checked: the game's settings do not declare its moves logged ("moves": "logged"), so its %[1]d move events were not checked against the rules`,
		`kontrol edilmedi: oyunun ayarları hamlelerin kaydedildiğini bildirmiyor ("moves": "logged"); bu yüzden %[1]d hamle olayı kurallara göre kontrol edilmedi`,
		`لم يُفحص: إعدادات اللعبة لا تعلن أن نقلاتها مسجلة ("moves": "logged")، فلم تُفحص أحداث النقلات (وعددها %[1]d) وفق القواعد`},
	mMvPass: {"MvPass", "%[1]d moves for %[2]d played rolls replayed under the rules of %[3]s: each is a legal play of the seat on turn with its roll's logged dice, in canonical notation, and every played roll has its move",
		"%[2]d oynanan atışın %[1]d hamlesi %[3]s kurallarına göre yeniden oynatıldı: her biri sırası gelen koltuğun, atışın kayıtlı zarlarıyla yaptığı kurallara uygun bir hamle, standart gösterimde; oynanan her atışın hamlesi var",
		"أُعيدت النقلات (وعددها %[1]d) للرميات الملعوبة (وعددها %[2]d) وفق قواعد %[3]s: كل منها لعبة مشروعة للمقعد صاحب الدور بنرد رميتها المسجل، بالتدوين القانوني، ولكل رمية ملعوبة نقلتها"},
	mMvPassNone: {"MvPassNone", "no roll was played (%[1]s): there are no moves to check",
		"hiç atış oynanmadı (%[1]s): kontrol edilecek hamle yok",
		"لم تُلعب أي رمية (%[1]s): لا نقلات لفحصها"},
	mMvPassFinished: {"MvPassFinished", "%[1]s; the end (%[2]s) agrees with the final position: %[3]s",
		"%[1]s; bitiş (%[2]s) son konumla uyuşuyor: %[3]s",
		"تمّ الفحص: %[1]s؛ والنهاية (%[2]s) توافق الوضع الأخير على الرقعة: %[3]s"},
	mMvPassResigned: {"MvPassResigned", "%[1]s; the end (%[2]s) is not a result on the board, and the rules do not check it",
		"%[1]s; bitiş (%[2]s) tahtadaki bir sonuç değil ve kurallar onu kontrol etmez",
		"تمّ الفحص: %[1]s؛ أما النهاية (%[2]s) فليست نتيجة على الرقعة، ولا تفحصها القواعد"},
	mMvIllegal: {"MvIllegal", "log.entries[%[1]d] (seq %[2]d): the move of roll %[3]d by player %[4]d, %[5]q, breaks the rule %[6]s: %[7]s",
		"log.entries[%[1]d] (sıra no %[2]d): %[4]d. oyuncunun %[3]d. atış için yaptığı %[5]q hamlesi %[6]s kuralını çiğniyor: %[7]s",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d): نقلة اللاعب %[4]d للرمية %[3]d، وهي %[5]q، تخالف القاعدة %[6]s: %[7]s"},
	mMvOwed: {"MvOwed", "log.entries[%[1]d] (seq %[2]d, %[3]s) comes before the move of roll %[4]d (%[5]s), which player %[6]d had to play: each played roll needs its move event before the next roll and before a finished end",
		"log.entries[%[1]d] (sıra no %[2]d, %[3]s), %[6]d. oyuncunun oynaması gereken %[4]d. atışın (%[5]s) hamlesinden önce geliyor: oynanan her atışın hamle olayı sonraki atıştan ve finished bitişinden önce kaydedilmeli",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d، %[3]s) يأتي قبل نقلة الرمية %[4]d (%[5]s) التي كان على اللاعب %[6]d لعبها: لكل رمية ملعوبة حدث نقلة يجب أن يُسجَّل قبل الرمية التالية وقبل نهاية finished"},
	mMvNotOver: {"MvNotOver", "log.entries[%[1]d] (seq %[2]d): the end says the game was finished (%[3]s), but it is not over on the board",
		"log.entries[%[1]d] (sıra no %[2]d): bitiş oyunun tamamlandığını söylüyor (%[3]s), ama oyun tahtada bitmemiş",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d): تقول النهاية إن اللعبة اكتملت (%[3]s)، لكنها لم تنتهِ على الرقعة"},
	mMvWrongResult: {"MvWrongResult", "log.entries[%[1]d] (seq %[2]d): the end says %[3]s, but the final position gives %[4]s",
		"log.entries[%[1]d] (sıra no %[2]d): bitiş %[3]s diyor, ama son konum %[4]s veriyor",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d): تقول النهاية %[3]s، لكن الوضع الأخير يعطي %[4]s"},
	mMvRollRefused: {"MvRollRefused", "log.entries[%[1]d] (seq %[2]d): roll %[3]d (%[4]s) is refused by the rule %[5]s: %[6]s",
		"log.entries[%[1]d] (sıra no %[2]d): %[3]d. atış (%[4]s) %[5]s kuralına takılıyor: %[6]s",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d): الرمية %[3]d (%[4]s) مرفوضة بالقاعدة %[5]s: %[6]s"},
	mMvRefused: {"MvRefused", "log.entries[%[1]d] (seq %[2]d, %[3]s) is refused by the rules engine (%[4]s): %[5]s",
		"log.entries[%[1]d] (sıra no %[2]d, %[3]s) kural motoru tarafından reddediliyor (%[4]s): %[5]s",
		"المُدخل log.entries[%[1]d] (التسلسل %[2]d، %[3]s) يرفضه محرك القواعد (%[4]s): %[5]s"},
	mMvDraw: {"MvDraw", "a draw (both mother checkers pinned)", "beraberlik (iki ana pul da kıstırılmış)", "تعادلًا (الحجران الأمّان محبوسان كلاهما)"},
	mMvWins: {"MvWins", "player %[1]d winning %[2]s (points: %[3]d)",
		"%[1]d. oyuncunun %[2]s kazanması (puan: %[3]d)",
		"فوز اللاعب %[1]d %[2]s (النقاط: %[3]d)"},
	mMvWinsCube: {"MvWinsCube", "player %[1]d winning %[2]s (points: %[3]d times the doubling cube's value, a power of two; the cube is not logged)",
		"%[1]d. oyuncunun %[2]s kazanması (puan: %[3]d çarpı katlama küpünün değeri, ikinin bir kuvveti; küp kaydedilmiyor)",
		"فوز اللاعب %[1]d %[2]s (النقاط: %[3]d مضروبة في قيمة مكعب المضاعفة، وهي قوة من قوى اثنين؛ لا يُسجَّل المكعب)"},
	mMvSingle: {"MvSingle", "a single game", "tek oyun", "بلعبة مفردة"},
	mMvDouble: {"MvDouble", "a double game (gammon, mars)", "çifte oyun (mars)", "بلعبة مضاعفة (غامون، مارس)"},
	mMvTriple: {"MvTriple", "a triple game (backgammon)", "üçlü oyun (backgammon)", "بلعبة ثلاثية (باكغامون)"},
	mMvEnd: {"MvEnd", "%[1]s, winner player %[2]d, points %[3]d",
		"%[1]s, kazanan %[2]d. oyuncu, puan %[3]d",
		"النتيجة «%[1]s»، الفائز اللاعب %[2]d، النقاط %[3]d"},
	mMvEndDraw: {"MvEndDraw", "%[1]s, no winner",
		"%[1]s, kazanan yok",
		"النتيجة «%[1]s»، بلا فائز"},

	mRuNotation:     {"RuNotation", "the play is not valid notation", "hamle geçerli bir gösterim değil", "النقلة ليست تدوينًا صحيحًا"},
	mRuNonCanonical: {"RuNonCanonical", "the play is legal but not written in its canonical form", "hamle kurallara uygun ama standart (kanonik) biçimde yazılmamış", "النقلة مشروعة لكنها غير مكتوبة بصيغتها القانونية"},
	mRuNoChecker:    {"RuNoChecker", "it moves from a point (or the bar) where the mover has no checker", "oyuncunun pulu olmayan bir haneden (ya da bardan) pul oynatıyor", "تحرّك حجرًا من نقطة (أو من البار) ليس فيها حجر للاعب"},
	mRuBlocked:      {"RuBlocked", "it lands on a point the opponent holds", "rakibin tuttuğu bir haneye iniyor", "تنزل على نقطة يملكها الخصم"},
	mRuHitMark:      {"RuHitMark", "it marks a hit (*) where no single opposing checker stands", "tek bir rakip pulun durmadığı yerde vuruş (*) işaretliyor", "تعلّم ضربة (*) حيث لا يقف حجر منفرد للخصم"},
	mRuBarFirst:     {"RuBarFirst", "it moves another checker while one is on the bar", "barda pul varken başka bir pul oynatıyor", "تحرّك حجرًا آخر وفي البار حجر"},
	mRuPinned:       {"RuPinned", "it moves a pinned checker (plakoto)", "kıstırılmış (mahbus) bir pulu oynatıyor (plakoto)", "تحرّك حجرًا محبوسًا (بلاكوتو)"},
	mRuHitAndRun:    {"RuHitAndRun", "it moves on with a checker that hit in its home board (tavla)", "kendi iç alanında vuruş yapan pulla yoluna devam ediyor (tavla)", "تتابع بحجر ضرب في منطقته الداخلية (طاولة)"},
	mRuFirstChecker: {"RuFirstChecker", "it starts a second checker before the first passed the opponent's starting point (fevga)", "ilk pul rakibin başlangıç hanesini geçmeden ikinci bir pulu çıkarıyor (fevga)", "تُخرج حجرًا ثانيًا قبل أن يتجاوز الأول نقطة بداية الخصم (فيفغا)"},
	mRuBearOffNotHome: {"RuBearOffNotHome", "it bears off while a checker is outside the home board, on the bar, or pinned",
		"bir pul iç alanın dışında, barda ya da kıstırılmışken pul topluyor",
		"تُخرج حجرًا من الرقعة وحجرٌ خارج المنطقة الداخلية أو في البار أو محبوس"},
	mRuBearOffHigher: {"RuBearOffHigher", "it bears off with a larger die while a checker stands on a higher point",
		"daha yüksek bir hanede pul varken büyük zarla pul topluyor",
		"تُخرج حجرًا بزهر أكبر وحجرٌ على نقطة أعلى"},
	mRuStartQuarter: {"RuStartQuarter", "it ends holding all six points of the starting quarter (fevga)", "başlangıç çeyreğinin altı hanesinin hepsini tutarak bitiyor (fevga)", "تنتهي وهي تملك نقاط ربع البداية الست كلها (فيفغا)"},
	mRuPrimeTrap:    {"RuPrimeTrap", "it ends with a prime that every opposing checker is behind (fevga)", "bütün rakip pulların gerisinde kaldığı bir kapıyla (prime) bitiyor (fevga)", "تنتهي بسدّ تقع خلفه كل أحجار الخصم (فيفغا)"},
	mRuMustMove:     {"RuMustMove", "it is empty although a checker can move", "bir pul oynayabildiği halde boş", "فارغة مع أن حجرًا يستطيع الحركة"},
	mRuBothDice:     {"RuBothDice", "it uses one die although both can be used", "iki zar da kullanılabilirken yalnızca birini kullanıyor", "تستعمل زهرًا واحدًا مع إمكان استعمال الزهرين"},
	mRuMaxDice:      {"RuMaxDice", "it uses fewer numbers of a double than can be used", "çiftin kullanılabilecek sayısından azını kullanıyor", "تستعمل من أرقام الدُّبل أقل مما يمكن"},
	mRuLargerDie:    {"RuLargerDie", "it uses the smaller die when only one can be used and the larger can", "yalnızca bir zar kullanılabilirken ve büyüğü oynanabilirken küçüğünü kullanıyor", "تستعمل الزهر الأصغر حين لا يمكن إلا زهر واحد والأكبر ممكن"},
	mRuDice:         {"RuDice", "it cannot be made with these dice at all", "bu zarlarla hiç yapılamaz", "لا يمكن لعبها بهذا النرد أصلًا"},
	mRuGameOver:     {"RuGameOver", "it comes after the game ended on the board", "oyun tahtada bittikten sonra geliyor", "تأتي بعد انتهاء اللعبة على الرقعة"},
	mRuNotOnTurn:    {"RuNotOnTurn", "it is not by the seat to play, or no roll waits for a move", "sırası gelen koltuktan değil, ya da hamle bekleyen bir atış yok", "ليست من المقعد صاحب الدور، أو لا رمية تنتظر نقلة"},
	mRuRollMismatch: {"RuRollMismatch", "it names another roll than the one waiting for a move", "hamle bekleyen atıştan başka bir atışı belirtiyor", "تسمّي رمية غير التي تنتظر النقلة"},
	mRuUnknown:      {"RuUnknown", "rule %[1]s", "%[1]s kuralı", "القاعدة %[1]s"},

	mStMoves: {"StMoves", "Every move of this game is a legal %[1]s play, by the seat on turn, of the dice logged for its roll, and every played roll has its move: the game replays from the log under the rules.",
		"Bu oyunun her hamlesi, sırası gelen koltuğun, atışı için kaydedilen zarlarla yaptığı kurallara uygun bir %[1]s hamlesi ve oynanan her atışın hamlesi var: oyun, kayıt defterinden kurallara göre yeniden oynanabiliyor.",
		"كل نقلة في هذه اللعبة لعبة %[1]s مشروعة، من المقعد صاحب الدور، بالنرد المسجل لرميتها، ولكل رمية ملعوبة نقلتها: تُعاد اللعبة من السجل وفق القواعد."},
	mStMovesCube: {"StMovesCube", "The doubling cube's value: doubling is not logged, so the points of the end were checked only as the result times a power of two.",
		"Katlama küpünün değerini: katlamalar kaydedilmiyor; bu yüzden bitişteki puan yalnızca sonucun ikinin bir kuvvetiyle çarpımı olarak kontrol edildi.",
		"قيمة مكعب المضاعفة: لا تُسجَّل المضاعفات، فلم تُفحص نقاط النهاية إلا على أنها النتيجة مضروبة في قوة من قوى العدد اثنين."},
	mStMovesEnd: {"StMovesEnd", "Why the game ended: it ended as %[1]s, which the rules of the board do not check.",
		"Oyunun neden bittiğini: oyun «%[1]s» ile bitti ve tahtanın kuralları bunu kontrol etmez.",
		"سبب انتهاء اللعبة: انتهت بحالة «%[1]s»، ولا تفحصها قواعد الرقعة."},
	mStMovesNotLogged: {"StMovesNotLogged", "That the moves were legal: this game's settings do not declare its moves logged, so they were not checked against the rules.",
		"Hamlelerin kurallara uygun olduğunu: bu oyunun ayarları hamlelerin kaydedildiğini bildirmiyor, dolayısıyla kurallara göre kontrol edilmediler.",
		"أن النقلات كانت مشروعة: إعدادات هذه اللعبة لا تعلن أن نقلاتها مسجلة، فلم تُفحص وفق القواعد."},

	// ListSep joins a list of clauses; the Arabic semicolon is U+061B.
	mListSep: {"ListSep", "; ", "; ", "؛ "},
	mStBundleSignedAnc: {"StBundleSignedAnc", "The checkpoint is signed by the log key %[1]s: the log vouches for these events and their order, in which the fingerprint was logged before the players' tokens, the drand beacon and the rolls.",
		"Kontrol noktası %[1]s kayıt defteri anahtarıyla imzalı: kayıt defteri bu olaylara ve sıralarına kefil; bu sırada parmak izi, oyuncuların tanıtıcılarından, drand işaretinden ve atışlardan önce kaydedilmiş.",
		"نقطة التحقق موقّعة بمفتاح السجل %[1]s: يشهد السجل بهذه الأحداث وبترتيبها، وفيه سُجّلت البصمة قبل رمزي اللاعبين وإشارة drand والرميات."},
	mStBundleSignedPer: {"StBundleSignedPer", "The checkpoint is signed by the log key %[1]s: the log vouches for these events and their order, in which each roll's commitment was logged before its second number and its dice.",
		"Kontrol noktası %[1]s kayıt defteri anahtarıyla imzalı: kayıt defteri bu olaylara ve sıralarına kefil; bu sırada her atışın taahhüdü, o atışın ikinci sayısından ve zarlarından önce kaydedilmiş.",
		"نقطة التحقق موقّعة بمفتاح السجل %[1]s: يشهد السجل بهذه الأحداث وبترتيبها، وفيه سُجّل التزام كل رمية قبل رقمها الثاني ونردها."},
	// The results of an end event, as a page says them.
	mEndFinished:  {"EndFinished", "finished", "tamamlanma", "اكتمال"},
	mEndResigned:  {"EndResigned", "resigned", "çekilme", "انسحاب"},
	mEndAbandoned: {"EndAbandoned", "abandoned", "yarıda bırakma", "ترك"},
	mVdUntiedHead: {"VdUntiedHead", "Every roll checked, but nothing ties this game to a log",
		"Her atış kontrol edildi, ama bu oyunu bir kayıt defterine bağlayan bir şey yok",
		"تم التحقق من كل رمية، لكن لا شيء يربط هذه اللعبة بسجل"},
	mVdFail: {"VdFail", "This game does not check out",
		"Bu oyun kontrolden geçmedi",
		"هذه اللعبة لا تصمد أمام الفحص"},
	mVdWrongSeal: {"VdWrongSeal", "This is not the seal code of this game",
		"Bu, bu oyunun mühür kodu değil",
		"هذا ليس رمز ختم هذه اللعبة"},
	mVdBadInput: {"VdBadInput", "This file cannot be checked",
		"Bu dosya kontrol edilemiyor",
		"لا يمكن فحص هذا الملف"},
	mVdDiceTav: {"VdDiceTav", "All %[1]d rolls were recomputed from the seed revealed after the game and the two players' contributions: no die was changed.",
		"%[1]d atışın hepsi, oyundan sonra açıklanan tohumdan ve iki oyuncunun katkılarından yeniden hesaplandı: hiçbir zar değiştirilmemiş.",
		"أُعيد حساب الرميات كلها (%[1]d) من البذرة التي كُشفت بعد اللعبة ومن مساهمتي اللاعبين: لم يُغيَّر أي نرد."},
	mVdDiceAnc: {"VdDiceAnc", "All %[1]d rolls were recomputed from the seed revealed after the game, the two players' tokens and drand round %[2]d: no die was changed.",
		"%[1]d atışın hepsi, oyundan sonra açıklanan tohumdan, iki oyuncunun tanıtıcılarından ve drand'ın %[2]d numaralı turundan yeniden hesaplandı: hiçbir zar değiştirilmemiş.",
		"أُعيد حساب الرميات كلها (%[1]d) من البذرة التي كُشفت بعد اللعبة ومن رمزي اللاعبين ومن جولة drand رقم %[2]d: لم يُغيَّر أي نرد."},
	mVdDicePer: {"VdDicePer", "All %[1]d rolls were recomputed from their own seeds, each matching the commitment recorded for its roll: no roll was changed after it was recorded.",
		"%[1]d atışın hepsi kendi tohumlarından yeniden hesaplandı; her tohum, atışı için kaydedilen taahhüde uyuyor: hiçbir atış kaydedildikten sonra değiştirilmemiş.",
		"أُعيد حساب الرميات كلها (%[1]d) من بذورها، وكل بذرة تطابق الالتزام المسجل لرميتها: لم تُغيَّر أي رمية بعد تسجيلها."},
	mVdNoRolls: {"VdNoRolls", "The game ended before its first roll: there is no roll to recompute.",
		"Oyun ilk atıştan önce bitti: yeniden hesaplanacak atış yok.",
		"انتهت اللعبة قبل رميتها الأولى: لا رمية لإعادة حسابها."},
	mVdSealSeen: {"VdSealSeen", "The seal matches the code you saw before the game, so the seed was fixed before the first roll and could not be changed.",
		"Mühür, oyundan önce gördüğün kodla eşleşiyor; demek ki tohum ilk atıştan önce belirlenmişti ve değiştirilemezdi.",
		"الختم يطابق الرمز الذي رأيته قبل اللعبة، إذن ثُبّتت البذرة قبل الرمية الأولى ولم يكن ممكنًا تغييرها."},
	mVdPerSeen: {"VdPerSeen", "The seal code you gave is that of roll %[1]d, so that roll's seed was fixed before you saw it.",
		"Verdiğin mühür kodu %[1]d. atışa ait; demek ki o atışın tohumu sen onu görmeden önce belirlenmişti.",
		"رمز الختم الذي أعطيته هو رمز الرمية %[1]d، إذن ثُبّتت بذرة تلك الرمية قبل أن تراه."},
	mVdSealLogged: {"VdSealLogged", "The seal was logged before the players' contributions and the first roll, in the public log signed by its key.",
		"Mühür, oyuncuların katkılarından ve ilk atıştan önce, anahtarıyla imzalı açık kayıt defterine kaydedildi.",
		"سُجّل الختم قبل مساهمتي اللاعبين وقبل الرمية الأولى، في السجل العام الموقّع بمفتاحه."},
	mVdSealLoggedAnc: {"VdSealLoggedAnc", "The seal was logged before the players' tokens and the drand beacon, in the public log signed by its key.",
		"Mühür, oyuncuların tanıtıcılarından ve drand işaretinden önce, anahtarıyla imzalı açık kayıt defterine kaydedildi.",
		"سُجّل الختم قبل رمزي اللاعبين وقبل إشارة drand، في السجل العام الموقّع بمفتاحه."},
	mVdAnchor: {"VdAnchor", "drand round %[1]d was published after the sealing time the record gives, so nobody could choose the dice in advance.",
		"drand'ın %[1]d numaralı turu kaydın verdiği mühürleme zamanından sonra yayımlandı; bu yüzden zarları kimse önceden seçemezdi.",
		"نُشرت جولة drand رقم %[1]d بعد وقت الختم الذي يذكره السجل، فلم يكن بوسع أحد أن يختار النرد مسبقًا."},
	mVdInLog: {"VdInLog", "Every event of the game is in the public log, under the signature of the log's key.",
		"Oyunun her olayı açık kayıt defterinde, defterin anahtarının imzası altında.",
		"كل أحداث اللعبة في السجل العام، تحت توقيع مفتاح السجل."},
	mVdUntied: {"VdUntied", "Nothing ties this game to a log: no log key was given, so anyone could have made this proof file with a key of their own.",
		"Bu oyunu bir kayıt defterine bağlayan hiçbir şey yok: kayıt defteri anahtarı verilmedi; bu kanıt dosyasını herkes kendi anahtarıyla yapmış olabilir.",
		"لا شيء يربط هذه اللعبة بسجل: لم يُعطَ مفتاح السجل، فكان بوسع أي أحد أن يصنع ملف الإثبات هذا بمفتاح من عنده."},
	mVdNoLog: {"VdNoLog", "This file is not from a log: nothing ties the game to one.",
		"Bu dosya bir kayıt defterinden gelmiyor: oyunu bir kayıt defterine bağlayan hiçbir şey yok.",
		"هذا الملف ليس من سجل: لا شيء يربط اللعبة بسجل."},
	mVdLimitTav: {"VdLimitTav", "This proof does not show that nobody saw the dice in advance: the server knew the seed during the game.",
		"Bu kanıt, kimsenin zarları önceden görmediğini göstermez: sunucu oyun sırasında tohumu biliyordu.",
		"ولا يبيّن هذا الإثبات أن أحدًا لم يرَ النرد مسبقًا: كان الخادم يعرف البذرة أثناء اللعبة."},
	mVdLimitAnc: {"VdLimitAnc", "This proof does not show that nobody knew the dice in advance: once the drand round was public, the server could compute them.",
		"Bu kanıt, kimsenin zarları önceden bilmediğini göstermez: drand turu yayımlandıktan sonra sunucu onları hesaplayabilirdi.",
		"ولا يبيّن هذا الإثبات أن أحدًا لم يعرف النرد مسبقًا: بعد أن صارت جولة drand علنية كان بوسع الخادم أن يحسبه."},
	mVdLimitPer: {"VdLimitPer", "This proof does not show that each seed was fixed before its roll: the player's app shows that, for the rolls the player rolled.",
		"Bu kanıt, her tohumun kendi atışından önce belirlendiğini göstermez: bunu oyuncunun uygulaması, oyuncunun kendi attığı atışlar için gösterir.",
		"ولا يبيّن هذا الإثبات أن كل بذرة ثُبّتت قبل رميتها: يبيّن ذلك تطبيقُ اللاعب في الرميات التي رماها اللاعب نفسه."},
	mVdLimitComputer: {"VdLimitComputer", "This proof does not show that the dice were hidden from whoever held the player's device: the seed was on it.",
		"Bu kanıt, zarların oyuncunun cihazını elinde tutandan gizli kaldığını göstermez: tohum o cihazdaydı.",
		"ولا يبيّن هذا الإثبات أن النرد كان مخفيًا عمّن يحمل جهاز اللاعب: كانت البذرة عليه."},
	mVdWitnessed: {"VdWitnessed", "Witnessed: %[1]d of the %[2]d in the log's list of witnesses countersigned a checkpoint of the log that holds this game, each after checking that it extends, unchanged, the record it had seen before. To show you another history of this game, the log would need them to lie too.",
		"Kayıt defterinin politikasındaki %[2]d tanıktan %[1]d tanesi tarafından tanıklandı: bu oyunu içeren bir kontrol noktasını, her biri daha önce gördüğü kaydı değiştirmeden sürdürdüğünü kontrol ettikten sonra karşı imzaladı. Kayıt defteri sana bu oyunun başka bir geçmişini gösterebilmek için onların da yalan söylemesine muhtaç olurdu.",
		"شهد عليها %[1]d من أصل %[2]d من الشهود في سياسة السجل: وقّعوا توقيعًا مصادِقًا على نقطة تحقق من السجل تضم هذه اللعبة، كلٌّ منهم بعد أن تحقق من أنها تُكمل، دون تغيير، السجل الذي رآه من قبل. ولكي يريك السجل تاريخًا آخر لهذه اللعبة، لاحتاج إلى أن يكذبوا هم أيضًا."},
	mVdNotWitnessed: {"VdNotWitnessed", "Not yet witnessed: the witnesses of the log's policy have not yet countersigned a checkpoint that holds this game. A log has its newest checkpoint countersigned at intervals (a minute by default), so a game is witnessed within a minute or two of its end: check again then. If it stays so, the log's witnesses are down or refuse the log.",
		"Henüz tanıklanmadı: kayıt defterinin politikasındaki tanıklar bu oyunu içeren bir kontrol noktasını henüz karşı imzalamadı. Kayıt defteri en yeni kontrol noktasını aralıklarla (varsayılan olarak dakikada bir) karşı imzalatır, yani bir oyun bitişinden bir iki dakika içinde tanıklanır: o zaman yeniden kontrol et. Böyle kalırsa, kayıt defterinin tanıkları çalışmıyor ya da kayıt defterini reddediyor demektir.",
		"لم يُشهد عليها بعد: لم يوقّع شهود سياسة السجل بعدُ توقيعًا مصادِقًا على نقطة تحقق تضم هذه اللعبة. يجعل السجل أحدث نقطة تحقق لديه تُوقَّع على فترات (دقيقة واحدة افتراضيًا)، فيُشهد على اللعبة في غضون دقيقة أو دقيقتين من نهايتها: أعد الفحص حينها. وإن بقي الأمر كذلك، فشهود السجل متوقفون أو يرفضون السجل."},
	mVdNotChecked: {"VdNotChecked", "Not checked: %[1]s.",
		"Kontrol edilmedi: %[1]s.",
		"لم يُفحص: %[1]s."},
	mVdNCAnchor: {"VdNC-anchor", "the drand beacon's own signature",
		"drand işaretinin kendi imzası",
		"توقيع إشارة drand نفسه"},
	mVdNCLogWitnesses: {"VdNC-log-witnesses", "the witnesses' countersignatures",
		"tanıkların karşı imzaları",
		"التواقيع المصادِقة للشهود"},
	mVdNCLogEmitter: {"VdNC-log-emitter-signatures", "the platform's signatures on its events",
		"platformun olaylarındaki imzaları",
		"تواقيع المنصة على أحداثها"},
	mVdNCMoves: {"VdNC-moves", "whether every move was legal",
		"her hamlenin kurallara uygun olup olmadığı",
		"هل كانت كل نقلة مشروعة"},
	mVdWrongRoll: {"VdWrongRoll", "Roll %[1]d is not what the seed gives: the record says %[2]s, the seed gives %[3]s.",
		"%[1]d. atış tohumun verdiği değil: kayıtta %[2]s yazıyor, tohum %[3]s veriyor.",
		"الرمية %[1]d ليست ما تعطيه البذرة: في السجل %[2]s، والبذرة تعطي %[3]s."},
	mVdSealOther: {"VdSealOther", "The seal code you typed, %[1]s, is not this game's: its seal code is %[2]s. Check the code you typed; apart from it, every check passed.",
		"Yazdığın mühür kodu, %[1]s, bu oyunun değil: bu oyunun mühür kodu %[2]s. Yazdığın kodu kontrol et; onun dışında her kontrol geçti.",
		"رمز الختم الذي كتبته، %[1]s، ليس لهذه اللعبة: رمز ختمها %[2]s. راجع الرمز الذي كتبته؛ وما عداه نجحت الفحوص كلها."},
	mVdSealOtherPer: {"VdSealOtherPer", "No roll of this match has the seal code you typed, %[1]s. Check the code you typed; apart from it, every check passed.",
		"Bu maçın hiçbir atışının mühür kodu, yazdığın %[1]s değil. Yazdığın kodu kontrol et; onun dışında her kontrol geçti.",
		"لا توجد في هذه المباراة رمية رمز ختمها %[1]s الذي كتبته. راجع الرمز الذي كتبته؛ وما عداه نجحت الفحوص كلها."},
	mVdFailFormat: {"VdFail-format", "The proof file is damaged, or is not a zarlog proof file.",
		"Kanıt dosyası bozuk ya da bir zarlog kanıt dosyası değil.",
		"ملف الإثبات تالف، أو ليس ملف إثبات من zarlog."},
	mVdFailCommitment: {"VdFail-commitment", "The seed revealed after the game does not match the seal shown before it.",
		"Oyundan sonra açıklanan tohum, oyundan önce gösterilen mühre uymuyor.",
		"البذرة التي كُشفت بعد اللعبة لا تطابق الختم الذي عُرض قبلها."},
	mVdFailExpected: {"VdFail-expected-commitment", "The seal of this game is not the seal code you typed.",
		"Bu oyunun mührü, yazdığın mühür kodu değil.",
		"ختم هذه اللعبة ليس رمز الختم الذي كتبته."},
	mVdFailAnchor: {"VdFail-anchor", "The drand beacon in the file is not the one the game was sealed to.",
		"Dosyadaki drand işareti, oyunun mühürlendiği işaret değil.",
		"إشارة drand في الملف ليست التي خُتمت اللعبة عليها."},
	mVdFailSequence: {"VdFail-sequence", "The rolls break the rules of the opening or come out of order.",
		"Atışlar açılış kurallarını bozuyor ya da sırasız.",
		"الرميات تخالف قواعد الافتتاح أو جاءت بغير ترتيبها."},
	mVdFailLogInclusion: {"VdFail-log-inclusion", "The public log's record of this game does not match this file.",
		"Açık kayıt defterinin bu oyuna ait kaydı bu dosyaya uymuyor.",
		"سجل هذه اللعبة في السجل العام لا يطابق هذا الملف."},
	mVdFailLogSignature: {"VdFail-log-signature", "The log's signature does not match the log's key: this file may not come from this log.",
		"Kayıt defterinin imzası anahtarına uymuyor: bu dosya bu defterden gelmemiş olabilir.",
		"توقيع السجل لا يطابق مفتاحه: قد لا يكون هذا الملف من هذا السجل."},
	mVdFailLogOrder: {"VdFail-log-order", "The events of this game are not in the order the log must keep.",
		"Bu oyunun olayları, kayıt defterinin tutması gereken sırada değil.",
		"أحداث هذه اللعبة ليست بالترتيب الذي يجب أن يحفظه السجل."},
	mVdFailLogAgreement: {"VdFail-log-agreement", "The events in the log do not say what the file says about this game.",
		"Kayıt defterindeki olaylar, dosyanın bu oyun hakkında söylediğini söylemiyor.",
		"الأحداث في السجل لا تقول ما يقوله الملف عن هذه اللعبة."},
	mVdFailLogWitnesses: {"VdFail-log-witnesses", "The witnesses' countersignatures do not meet the witness policy.",
		"Tanıkların karşı imzaları tanık politikasını karşılamıyor.",
		"التواقيع المصادِقة للشهود لا تستوفي سياسة الشهود."},
	mVdFailLogEmitter: {"VdFail-log-emitter-signatures", "An event of this game does not carry the platform's signature: someone other than the platform wrote it.",
		"Bu oyunun bir olayı platformun imzasını taşımıyor: onu platformdan başka biri yazmış.",
		"حدث من أحداث هذه اللعبة لا يحمل توقيع المنصة: كتبه أحد غير المنصة."},
	mVdFailMoves: {"VdFail-moves", "A move of this game breaks the rules, or its end does not match the board.",
		"Bu oyunun bir hamlesi kurallara aykırı ya da bitişi tahtadaki durumla uyuşmuyor.",
		"نقلة في هذه اللعبة تخالف القواعد، أو أن نهايتها لا توافق الرقعة."},
	mVdFailOther: {"VdFailOther", "A check failed (%[1]s): its details say what is wrong.",
		"Bir kontrol başarısız oldu (%[1]s): ayrıntıları neyin yanlış olduğunu söylüyor.",
		"أخفق فحص (%[1]s): تفاصيله تقول ما الخطأ."},
	mPxGame: {"PxGame", "Game %[1]d of %[2]d (%[3]s): %[4]s", "Oyun %[1]d / %[2]d (%[3]s): %[4]s", "اللعبة %[1]d من %[2]d (%[3]s): %[4]s"},
	mPxSummary: {"PxSummary", "Games of player %[2]s on %[3]q: %[1]d; every roll checked in %[4]d, invalid: %[5]d, not checked: %[6]d",
		"%[2]s oyuncusunun %[3]q sunucusundaki oyunları: %[1]d; her atışı kontrol edilen: %[4]d, geçersiz: %[5]d, kontrol edilemeyen: %[6]d",
		"ألعاب اللاعب %[2]s على الخادم %[3]q: %[1]d؛ تم التحقق من كل رمية في %[4]d، غير صالحة: %[5]d، لم يُتحقق منها: %[6]d"},
	mPxCount: {"PxCount", "Bad input: the export is not whole: its first line says it holds %[1]d games, it holds %[2]d",
		"Hatalı girdi: dışa aktarım eksiksiz değil: ilk satırı %[1]d oyun içerdiğini söylüyor, %[2]d oyun içeriyor",
		"مدخلات خاطئة: التصدير غير كامل: يقول سطره الأول إنه يضم %[1]d من الألعاب، وهو يضم %[2]d"},
	mPxHeader: {"PxHeader", "Bad input: the first line of this player's export is not its header: %[1]s",
		"Hatalı girdi: bu oyuncu dışa aktarımının ilk satırı başlığı değil: %[1]s",
		"مدخلات خاطئة: السطر الأول من تصدير هذا اللاعب ليس ترويسته: %[1]s"},
}
