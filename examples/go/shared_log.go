package main

import (
	"fmt"
	"os"
)

// sharedLog appends lines to a file that several processes write at once. The file is opened
// with O_APPEND and every line goes out in one write(2), so lines from different writers never
// interleave.
type sharedLog struct{ file *os.File }

// openSharedLog opens path for appending; "" means no log (a nil *sharedLog writes nothing).
func openSharedLog(path string) (*sharedLog, error) {
	if path == "" {
		return nil, nil
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &sharedLog{file: file}, nil
}

// Append writes "<event> <worker> <token>\n" in one write; a nil log writes nothing.
func (l *sharedLog) Append(event, worker string, token uint64) error {
	if l == nil {
		return nil
	}
	_, err := l.file.Write([]byte(fmt.Sprintf("%s %s %d\n", event, worker, token)))
	return err
}

func (l *sharedLog) Close() error {
	if l == nil {
		return nil
	}
	return l.file.Close()
}
