package main

import (
	"bytes"
	"unsafe"

	"github.com/crawlcheck/verifier/core/digest"
)

// The host's SHA-256.
//
// Go's SHA-256 compiled to wasm runs at about 40 MB/s under wazero and
// 100 MB/s in V8, while the host next to it (Go's crypto/sha256, Node's
// crypto) does over 1 GB/s; a check hashes about twice its input. So the
// module imports crawlcheck.sha256 and, if the host answers, hashes through
// it. A host without a fast synchronous SHA-256 (a browser) answers 0 and the
// module keeps its own for the instance's life. A host that answers but
// answers wrong would make every hash, and so every decision, wrong: the
// module checks it against its own implementation before the first call and,
// if they disagree, answers every call with an internal error naming the
// import (docs/abi.md).

// refusal, when not "", is the error every call answers: the host's
// SHA-256 failed the known-answer test.
var refusal string

func init() {
	refusal = useHostSHA256()
}

// hostSum is the host's SHA-256 of b.
func hostSum(b []byte) (sum [32]byte) {
	if hostSHA256(unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), unsafe.Pointer(&sum)) != 1 {
		panic("crawlcheck.sha256 stopped answering after it passed the known-answer test")
	}
	return sum
}

// useHostSHA256 runs the known-answer test and installs the host's
// SHA-256 if it passes. It returns the refusal message if the host answers
// wrong, "" otherwise (also when the host has none).
func useHostSHA256() string {
	// The first probe is the empty input, whose digest is in every
	// standard; lengths around the 55/56/64-byte padding edges and a
	// multi-block input follow, checked against the module's own SHA-256.
	var sum [32]byte
	switch hostSHA256(nil, 0, unsafe.Pointer(&sum)) {
	case 0:
		return ""
	case 1:
	default:
		return refuse("answered neither 0 nor 1")
	}
	if digest.Encode(sum[:]) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		return refuse("gave the wrong digest of the empty input")
	}
	abc := digest.Builtin([]byte("abc"))
	if digest.Encode(abc[:]) != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		return refuse("cannot be checked: the module's own SHA-256 is wrong")
	}
	input := make([]byte, 1000)
	for i := range input {
		input[i] = byte(i*7 + i>>8)
	}
	for _, n := range []int{3, 55, 56, 63, 64, 65, 119, 128, 1000} {
		var got [32]byte
		if hostSHA256(unsafe.Pointer(&input[0]), uint32(n), unsafe.Pointer(&got)) != 1 {
			return refuse("stopped answering during the known-answer test")
		}
		if want := digest.Builtin(input[:n]); !bytes.Equal(got[:], want[:]) {
			return refuse("gave a wrong digest of a " + itoa(n) + "-byte input")
		}
	}
	digest.SetHost(hostSum)
	return ""
}

func refuse(why string) string {
	return "the host's crawlcheck.sha256 " + why + " in the module's known-answer test: the module refuses to work with it (docs/abi.md)"
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}
