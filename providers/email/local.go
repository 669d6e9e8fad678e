package email

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"holdco/models"
)

// Local is the offline provider: a mailbox directory (under the data dir)
// that keeps the raw MIME of every message sent (sent/<hash>.eml) and the
// bodies of the messages it received (inbound/<hash>.json), from which the
// body fetch answers. Nothing leaves the machine.
type Local struct {
	dir string
}

// NewLocal opens the mailbox directory. It is created with the first
// message, so a process that never sends or receives leaves the data dir
// untouched.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("email: local mailbox: no directory")
	}
	return &Local{dir: dir}, nil
}

// fileName keeps ids (which come from outside) out of paths.
func fileName(id, ext string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:]) + ext
}

// Send writes the message's MIME to sent/, as the SMTP sender would hand it
// to a server.
func (l *Local) Send(_ context.Context, m models.OutgoingEmail) error {
	msg, err := buildMessage(m)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(l.dir, "sent", fileName(m.MessageID, ".eml")), func(f *os.File) error {
		_, err := msg.WriteTo(f)
		return err
	})
}

// SentMessage returns the MIME of a message sent with this Message-ID.
func (l *Local) SentMessage(messageID string) ([]byte, error) {
	return os.ReadFile(filepath.Join(l.dir, "sent", fileName(messageID, ".eml")))
}

// storedBody is a received body on disk.
type storedBody struct {
	Text string `json:"text"`
	HTML string `json:"html"`
}

// Receive is the local provider accepting a message for a company: it keeps
// the body, so that a webhook delivered without it can be completed by the
// body fetch later, offline. The webhook itself is posted by the caller (a
// development tool or a test).
func (l *Local) Receive(_ context.Context, providerMessageID string, b models.EmailBody) error {
	if providerMessageID == "" {
		return errors.New("email: local mailbox: provider message id is required")
	}
	data, err := json.Marshal(storedBody{Text: b.Text, HTML: b.HTML})
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(l.dir, "inbound", fileName(providerMessageID, ".json")), func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// FetchBody returns the body the mailbox keeps for a received message; an
// unknown message has an empty body (the provider has nothing to give).
func (l *Local) FetchBody(_ context.Context, providerMessageID string) (models.EmailBody, error) {
	data, err := os.ReadFile(filepath.Join(l.dir, "inbound", fileName(providerMessageID, ".json")))
	if errors.Is(err, fs.ErrNotExist) {
		return models.EmailBody{}, nil
	}
	if err != nil {
		return models.EmailBody{}, fmt.Errorf("email: local mailbox: %w", err)
	}
	var b storedBody
	if err := json.Unmarshal(data, &b); err != nil {
		return models.EmailBody{}, fmt.Errorf("email: local mailbox: body of a received message: %w", err)
	}
	return models.EmailBody{Text: b.Text, HTML: b.HTML}, nil
}

// writeAtomic writes a file through a temporary name, so a reader never
// sees half a message.
func writeAtomic(path string, write func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("email: local mailbox: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("email: local mailbox: %w", err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("email: local mailbox: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("email: local mailbox: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("email: local mailbox: %w", err)
	}
	return nil
}
