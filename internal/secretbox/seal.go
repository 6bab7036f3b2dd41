package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// ErrDecrypt is returned by [Open] when a sealed value cannot be
// authenticated: the key is wrong, the value was tampered with, or it was
// sealed under another name.
var ErrDecrypt = errors.New("secretbox: cannot decrypt: wrong key, tampered value, or value sealed under another name")

// nonceSize is the size of a GCM nonce, the standard 96 bits.
const nonceSize = 12

// adPrefix starts the associated data of every value; the value's name
// follows. The NUL byte ends the fixed part, so no name can make the
// associated data of another version or purpose.
const adPrefix = "paddock.secret/v1\x00"

// Sealed is an encrypted value. Encoded as JSON, both fields are standard
// base64.
type Sealed struct {
	// Nonce is the value's random 12-byte GCM nonce.
	Nonce []byte `json:"nonce"`
	// Ciphertext is the AES-256-GCM ciphertext followed by its 16-byte
	// authentication tag.
	Ciphertext []byte `json:"ciphertext"`
}

// Seal encrypts plaintext under k with AES-256-GCM and a fresh random
// nonce, binding it to name: [Open] fails unless given the same name.
func Seal(k Key, name string, plaintext []byte) (Sealed, error) {
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, fmt.Errorf("secretbox: %w", err)
	}
	return Sealed{
		Nonce:      nonce,
		Ciphertext: newGCM(k).Seal(nil, nonce, plaintext, []byte(adPrefix+name)),
	}, nil
}

// Open decrypts s, which must have been sealed under k and name. It returns
// [ErrDecrypt] if it cannot authenticate s.
func Open(k Key, name string, s Sealed) ([]byte, error) {
	if len(s.Nonce) != nonceSize {
		return nil, ErrDecrypt
	}
	p, err := newGCM(k).Open(nil, s.Nonce, s.Ciphertext, []byte(adPrefix+name))
	if err != nil {
		return nil, ErrDecrypt
	}
	return p, nil
}

func newGCM(k Key) cipher.AEAD {
	b, err := aes.NewCipher(k[:])
	if err != nil {
		panic(err) // unreachable: the key is 32 bytes
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic(err) // unreachable: AES has a 16-byte block
	}
	return g
}
