package node

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// workCall opens a Work stream on shuf, sends req as its only message
// and closes the sending side (a refusal shows in the stream's Recv).
func workCall(ctx context.Context, shuf pb.ShufflerClient, req *pb.WorkRequest, opts ...grpc.CallOption) (workStream, error) {
	w, err := shuf.Work(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if err := w.Send(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := w.CloseSend(); err != nil {
		return nil, err
	}
	return w, nil
}
