package cerr

import (
	"strconv"
	"strings"
)

// sprintf formats a message with the few verbs the core's messages use —
// %s %v %q %d %c %x, with an optional zero-padded width — exactly as fmt
// would for the argument types the core passes. It exists so that the core,
// and the wasm module built from it, do without fmt and the reflection it
// pulls in (about a third of a megabyte of WebAssembly).
func sprintf(format string, args ...any) string {
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		if format[i] == '%' {
			b.WriteByte('%')
			continue
		}
		width := 0
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			width = width*10 + int(format[i]-'0')
			i++
		}
		if i == len(format) {
			break
		}
		verb := format[i]
		if next >= len(args) {
			b.WriteString("%!" + string(verb) + "(MISSING)")
			continue
		}
		arg := args[next]
		next++
		var s string
		switch verb {
		case 'q':
			s = strconv.Quote(text(arg))
		case 'd':
			s = decimal(arg)
		case 'x':
			s = strconv.FormatInt(integer(arg), 16)
		case 'c':
			s = string(rune(integer(arg)))
		default: // 's', 'v'
			s = text(arg)
		}
		for n := len(s); n < width; n++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
	}
	return b.String()
}

// text is an argument as %s and %v show it.
func text(arg any) string {
	switch a := arg.(type) {
	case string:
		return a
	case Code:
		return string(a)
	case []string:
		return "[" + strings.Join(a, " ") + "]"
	case error:
		return a.Error()
	case interface{ String() string }:
		return a.String()
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return decimal(a)
	case bool:
		return strconv.FormatBool(a)
	}
	return "(unprintable value)"
}

// decimal is an integer argument in decimal; a uint64 above the int64
// range (a C size_t of SIZE_MAX) keeps its value.
func decimal(arg any) string {
	switch a := arg.(type) {
	case uint64:
		return strconv.FormatUint(a, 10)
	case uint:
		return strconv.FormatUint(uint64(a), 10)
	}
	return strconv.FormatInt(integer(arg), 10)
}

// integer is an integer argument as an int64.
func integer(arg any) int64 {
	switch a := arg.(type) {
	case int:
		return int64(a)
	case int8:
		return int64(a)
	case int16:
		return int64(a)
	case int32:
		return int64(a)
	case int64:
		return a
	case uint:
		return int64(a)
	case uint8:
		return int64(a)
	case uint16:
		return int64(a)
	case uint32:
		return int64(a)
	case uint64:
		return int64(a)
	}
	return 0
}
