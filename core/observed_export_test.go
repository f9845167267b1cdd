package core

// ObservedFields are continuity_check's observed members, as the op reads
// them (observedFields), for the Go op layer's generator (sdk_ops_go_test.go):
// the one object member whose members the hosts assemble field by field.
var ObservedFields = observedFields
