package job

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodSpecHashAnnotation is the Job annotation that stores the re-run key: the digest of
// the pod template the Job was created from ([RunJob]) or a keyed digest of the
// caller's explicit key ([RunJobWithKey]).
const PodSpecHashAnnotation = "cobaltcore.c5c3.io/pod-spec-hash"

// PodTemplateHash returns the SHA-256 (hex) of the JSON encoding of tpl, metadata
// included, so a content-derived pod annotation (a config hash) changes it: the re-run
// key [RunJob] uses. Build the template the same way on every pass: a field set on one
// pass and left to the server's default on the next changes the digest.
func PodTemplateHash(tpl *corev1.PodTemplateSpec) (string, error) {
	raw, err := json.Marshal(tpl)
	if err != nil {
		return "", fmt.Errorf("hash pod template: %w", err)
	}
	return digest(raw), nil
}

// keyDigest is what the annotation stores for an explicit re-run key: the hex
// HMAC-SHA256 of the key, keyed with the owner's UID and bound to the Job's
// namespace/name. See RunJobWithKey for why it is keyed this way, and why that does not
// make a secret re-run key safe.
func keyDigest(ownerUID types.UID, job client.ObjectKey, key string) string {
	mac := hmac.New(sha256.New, []byte(ownerUID))
	mac.Write([]byte("rerun-key\x00" + job.Namespace + "/" + job.Name + "\x00" + key))
	return hex.EncodeToString(mac.Sum(nil))
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
