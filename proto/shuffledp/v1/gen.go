// Package shuffledpv1 is the generated Go code of shuffledp.proto, the
// gRPC protocol between the client, shuffler and server processes of a
// networked deployment (package node). Do not edit the .pb.go files; edit
// shuffledp.proto and regenerate with
//
//	go generate ./proto/...
//
// which needs protoc (Debian's protobuf-compiler, 3.21.12) and the plugins
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//
// on PATH. The generated code is committed, so building needs neither.
package shuffledpv1

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative shuffledp.proto
