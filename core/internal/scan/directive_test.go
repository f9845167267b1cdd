package scan

import "testing"

// TestIsValue: what the directive rule counts as a concrete destination or
// account, and what it does not (versions, file names, dates, model names,
// words).
func TestIsValue(t *testing.T) {
	tlds := map[string]bool{"com": true, "example": true, "io": true}
	for v, want := range map[string]bool{
		"ops@relay.example":                  true,
		"https://collector.example/in":       true,
		"www.malicious-data-collector.com":   true,
		"hooks.partner-sync.io":              true,
		"203.0.113.77":                       true,
		"GB33BUKB20201555555555":             true,
		"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kk": true,
		"4402998112":                         true,
		"ATK-CIPHER-99887766":                true,
		"1.2.3":                              false,
		"package.json":                       false,
		"2025-01-01":                         false,
		"gpt-4o":                             false,
		"https://":                           false,
		"e.g":                                false,
		"recipient":                          false,
		"v1.2.30":                            false,
		"1.2.3.4.5":                          false,
	} {
		if got := isValue(v, tlds); got != want {
			t.Errorf("isValue(%q) = %v, want %v", v, got, want)
		}
	}
}
