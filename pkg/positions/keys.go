package positions

import "strings"

// NameOfKey splits a workload's key ("namespace/name", Kueue's
// workload.Reference) at its first "/" (a namespace holds none). One
// without "/" is all namespace, as no workload's is.
func NameOfKey[K ~string](key K) Name {
	ns, name, _ := strings.Cut(string(key), "/")
	return Name{Namespace: ns, Name: name}
}

// AppendKey appends n's key ("namespace/name") to buf: a map lookup by
// K(buf) then needs no string of its own.
func AppendKey(buf []byte, n Name) []byte {
	buf = append(buf, n.Namespace...)
	buf = append(buf, '/')
	return append(buf, n.Name...)
}
