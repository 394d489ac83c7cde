//go:build windows

package atomicfile

// SyncDir does nothing on Windows: a directory cannot be opened for
// flushing there (FlushFileBuffers refuses a directory handle), and NTFS
// journals its entries itself.
func SyncDir(dir string) error { return nil }
