package report

// ChainChunkBytes lets the tests make the chain check's parts small, so a
// few records span several.
var ChainChunkBytes = &chainChunkBytes
