// Thin wrapper so etcd can be built from the Go module proxy: etcd's own
// go.mod carries local-path replaces that `go install pkg@version` rejects.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
