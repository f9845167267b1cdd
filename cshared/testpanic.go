//go:build crawlcheck_testpanic

package main

// In test builds the op "test_abi_panic" panics in this layer, before
// core.Call (which recovers its own panics) is reached.
func init() {
	beforeCall = func(op string) {
		if op == "test_abi_panic" {
			panic("test_abi_panic: a deliberate panic in the C layer")
		}
	}
}
