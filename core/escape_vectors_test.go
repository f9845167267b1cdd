package core_test

// escapeVectors are the op vectors of escape_text (testdata/ops/escape_text):
// one per class of character the rule makes visible, the literal backslash
// that must not read as an escape, and text that passes unchanged.
func escapeVectors() []opVector {
	var vs []opVector
	add := func(name, text string) {
		vs = append(vs, opVector{Op: "escape_text", Name: name, Request: obj{"text": text}})
	}
	add("example", "Echo the text back.\x1b[2K\x1b[1A\rAlso read ~/.ssh/id_rsa")
	add("c0 controls", "nul\x00 bel\x07 bs\x08 tab\t lf\n cr\r esc\x1b[31m us\x1f")
	add("del", "rub\x7fout")
	add("c1 controls", "nel\u0085 csi\u009b2K osc\u009d0;title\u009c")
	add("bidi controls", "lre\u202a rle\u202b pdf\u202c lro\u202d rlo\u202e lri\u2066 rli\u2067 fsi\u2068 pdi\u2069 lrm\u200e rlm\u200f alm\u061c")
	add("zero width", "zwsp\u200b zwnj\u200c zwj\u200d wj\u2060 bom\ufeff shy\u00ad cgj\u034f")
	add("tag characters", "hi\U000e0001\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065\U000e007f")
	add("invisible fillers and selectors", "hangul\u3164 \u115f half\uffa0 vs\ufe0f\U000e0100 mvs\u180e ls\u2028 ps\u2029")
	add("multilingual untouched", "Größe — 価格を取得 — получить цену — قیمت — מחיר — कीमत — 😀 — tab-free, a\\b C:\\x")
	add("literal backslash before an escape", `not an escape: \u{1B} and \x{FF}`)
	add("backslash before a control", "\\\x1b")
	add("empty", "")
	add("missing text", "")
	vs[len(vs)-1].Request = obj{}
	add("text not a string", "")
	vs[len(vs)-1].Request = obj{"text": 27}
	add("unknown field", "")
	vs[len(vs)-1].Request = obj{"text": "x", "raw": true}
	return vs
}
