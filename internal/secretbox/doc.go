// Package secretbox encrypts the values of paddock's small secret store at
// rest.
//
// Each value is sealed with AES-256-GCM under a [Key] by [Seal] and opened
// by [Open]. The key comes from a key file ([LoadKeyFile]) or from an
// environment variable ([ParseKey]). Sealed values are kept in a JSON
// [File], read by [ReadFile] and replaced atomically by [WriteFile].
//
// # Errors
//
// [Open] returns [ErrDecrypt] whenever a value cannot be authenticated; it
// does not say why, since a wrong key, a tampered value and a value moved to
// another name look the same. Errors from [ParseKey] and [LoadKeyFile] never
// contain key material; errors about a file name the file and, where there
// is one, the command that fixes it.
//
// # Concurrency
//
// All functions are safe for concurrent use. [WriteFile] replaces the file
// atomically, so readers see the old or the new contents, never a mix, but
// nothing here serializes writers: when two processes each read, modify and
// write the store, the later write wins and the earlier change is lost.
// Callers that need read-modify-write must hold a lock of their own.
// Concurrent calls to [LoadKeyFile] that both create the key file agree on
// one key.
//
// # Security
//
// The store protects secret values from anyone who can read the store file
// but not the key: a backup, a copied home directory, a file synced to
// another machine. Each value is bound to its name, so values cannot be
// swapped between names undetected.
//
// It does not protect against:
//
//   - anyone who can read the key file or the environment holding the key,
//     or the memory of a process that has opened a value;
//   - disclosure of the names, which are stored in plaintext, or of each
//     value's length;
//   - rollback or deletion: there is no MAC over the whole file, so an
//     attacker who can write it can remove entries, or put back a value
//     previously sealed under the same name and key;
//   - a key file on a file system that does not enforce Unix permissions
//     (LoadKeyFile checks the mode bits only where they mean something; on
//     Windows it does not check them at all).
//
// Nonces are 12 random bytes, so a single key should seal fewer than 2^32
// values over its lifetime, far beyond a personal secret store's needs.
//
// # On-disk format
//
// The key file holds the 32-byte key in standard base64 on one line, and
// must not be accessible to group or others (mode 0600 or stricter).
//
// The store is a JSON object:
//
//	{
//	  "schema": "paddock.secrets",
//	  "version": 1,
//	  "secrets": {
//	    "github/token": {
//	      "nonce": "<12 bytes, standard base64>",
//	      "ciphertext": "<AES-256-GCM output with its 16-byte tag, standard base64>"
//	    }
//	  }
//	}
//
// The associated data of each value is "paddock.secret/v1", a NUL byte, and
// the value's name. Readers refuse files whose version is newer than
// [FileVersion]. The file has mode 0600.
package secretbox
