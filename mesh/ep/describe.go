package ep

import (
	"context"
	"encoding/json"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// describeOutput is the schema of a describe answer.
const describeOutput = `{"type":"object","required":["public","descriptor"],"properties":{"public":{"type":"boolean"},"descriptor":{"type":"object","required":["endpoint","owner","protocol","clusters"]}}}`

// describeCommand is the reserved discovery command: untargeted, void args, on every rail, answered from what Start published.
func describeCommand(s *Server) Command {
	return Command{
		Name:       proto.CommandDescribe,
		Class:      proto.ClassEphemeral,
		Capability: "describe",
		Output:     json.RawMessage(describeOutput),
		Handler: func(ctx context.Context, c *Call) (any, *proto.Error) {
			return s.describe(ctx, c.Caller())
		},
	}
}

func (s *Server) describe(ctx context.Context, caller proto.Caller) (proto.DescribeAnswer, *proto.Error) {
	d := proto.Descriptor{Endpoint: proto.EndpointName(s.token), Owner: s.opts.Identity.Principal.ID(), EndpointType: s.opts.EndpointType, Protocol: proto.Protocol{V: proto.Version}}
	if !s.opts.Private {
		d.Clusters = s.clusters
		return proto.DescribeAnswer{Public: true, Descriptor: d, Artifacts: s.contracts.Artifacts()}, nil
	}
	if s.opts.View == nil {
		return proto.DescribeAnswer{}, proto.Refuse(proto.CodeUnavailable, "%s has no trusted authority view to answer a non-public describe", d.Endpoint)
	}
	visible, err := s.opts.View(ctx, caller)
	if err != nil {
		return proto.DescribeAnswer{}, proto.Refuse(proto.CodeUnavailable, "no fresh authority view for %s: %v", caller.ID(), err)
	}
	for _, cl := range s.clusters {
		ref := proto.ClusterRef{Digest: cl.Digest, Commands: []string{}}
		for _, name := range cl.Commands {
			if visible(name) {
				ref.Commands = append(ref.Commands, name)
			}
		}
		if len(ref.Commands) == len(cl.Commands) {
			ref.Document = cl.Document // wholly visible: the document may ride along
		}
		d.Clusters = append(d.Clusters, ref)
	}
	return proto.DescribeAnswer{Public: false, Descriptor: d}, nil
}
