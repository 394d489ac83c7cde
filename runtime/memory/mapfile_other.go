//go:build !unix

package memory

import "os"

// mapFile reads the file at path (see the unix version, which maps it).
func mapFile(path string) ([]byte, func(), error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(data) > headsMaxSize {
		return nil, nil, errHeads
	}
	return data, func() {}, nil
}
