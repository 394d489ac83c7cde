package sessionfiles

// What every Store does the same way, for the stores outside this package
// (the cluster's): a client's file name kept as Dir keeps it, and the
// content type it records.

// CleanName is the name a store keeps for a client's file name (its last
// element), or an ErrInvalid refusal.
func CleanName(name string) (string, error) { return cleanName(name) }

// ContentType is the type a store records: the declared one, else sniffed
// from head (the first 512 bytes), else from the name's extension.
func ContentType(declared, name string, head []byte) string { return contentType(declared, name, head) }
