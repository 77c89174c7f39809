package proto

// CheckRequest runs the envelope-only checks of the serve pipeline, in the spec's order, against the parsed subject: version, shape, op agreement, class, digest binding, bind placement, target agreement and sender. inputDigest and outputDigest are the registered command's closure digests; an empty one matches nothing, so a server that forgets them refuses rather than admits. Every refusal is not-executed.
func CheckRequest(subject Request, body EndpointRequest, declaredClass, inputDigest, outputDigest string) *Error {
	if body.V != Version {
		return Refuse(CodeUnsupportedVersion, "request envelope version %d is not %d", body.V, Version)
	}
	if !ValidID(body.ID) {
		return Refuse(CodeBadRequest, "request id %q must be 1-64 characters of A-Z a-z 0-9 _ -", body.ID)
	}
	if body.DeadlineMs < 0 {
		return Refuse(CodeBadRequest, "deadlineMs %d must be a positive budget", body.DeadlineMs)
	}
	if body.DeadlineMs == 0 {
		switch {
		case body.ReplyExpected:
			return Refuse(CodeBadRequest, "a call needs deadlineMs")
		case subject.Rail == RailAll:
			return Refuse(CodeBadRequest, "a request on the all rail needs deadlineMs")
		case body.Class == ClassJournal:
			return Refuse(CodeBadRequest, "a journal submission needs deadlineMs (its decision deadline)")
		}
	}

	if name := EndpointName(subject.Endpoint); body.Op.Endpoint != name {
		return Refuse(CodeOpMismatch, "op.endpoint %q does not match the subject's endpoint %q", body.Op.Endpoint, name)
	}
	if body.Op.Command != subject.Command {
		return Refuse(CodeOpMismatch, "op.command %q does not match the subject's command %q", body.Op.Command, subject.Command)
	}
	if body.Class != declaredClass {
		return Refuse(CodeClassMismatch, "class %q is not the command's declared class %q", body.Class, declaredClass)
	}
	if subject.Command != CommandDescribe {
		if e := checkDigest("inputDigest", body.Op.InputDigest, inputDigest); e != nil {
			return e
		}
		if e := checkDigest("outputDigest", body.Op.OutputDigest, outputDigest); e != nil {
			return e
		}
	}

	if body.Bind != nil {
		switch {
		case subject.Command == CommandDescribe:
			return Refuse(CodeBadRequest, "describe carries no bind: it is what produces one")
		case subject.Rail == RailAll:
			return Refuse(CodeBadRequest, "a bind has no meaning on the all rail, which addresses every instance")
		case subject.Rail == RailInst && body.Bind.InstanceID != subject.InstanceID:
			return Refuse(CodeBadRequest, "bind.instanceId %q contradicts the inst rail's instance %q", body.Bind.InstanceID, subject.InstanceID)
		}
	}

	if e := checkTarget(subject, body.Target); e != nil {
		return e
	}
	if id := subject.Caller.ID(); body.From.ID != id {
		return Refuse(CodeSenderMismatch, "from.id %q does not match the subject's sender %q", body.From.ID, id)
	}
	return nil
}

func checkDigest(field, got, want string) *Error {
	if got == "" {
		return Refuse(CodeContractMismatch, "op.%s is required on every command but describe", field)
	}
	if got != want {
		return Refuse(CodeContractMismatch, "op.%s %s does not match the served contract %s; describe again", field, got, want)
	}
	return nil
}

func checkTarget(subject Request, t *BodyTarget) *Error {
	if !subject.Mode.Targeted() {
		if t != nil {
			return Refuse(CodeTargetMismatch, "a %s request carries no body target", modeLabel(subject.Mode))
		}
		return nil
	}
	if t == nil {
		return Refuse(CodeTargetMismatch, "a %s request needs a body target", modeLabel(subject.Mode))
	}
	if t.Owner != subject.Target.Owner {
		return Refuse(CodeTargetMismatch, "target.owner %q does not match the subject's target owner %q", t.Owner, subject.Target.Owner)
	}
	if (subject.Mode == ModeHandle || subject.Mode == ModeExact) &&
		(t.Actor != subject.Target.Actor || t.LifecycleUID != subject.Target.UID) {
		return Refuse(CodeTargetMismatch, "in %s mode the body target %s.%s/%s must equal the subject's %s.%s/%s",
			subject.Mode, t.Owner, t.Actor, t.LifecycleUID, subject.Target.Owner, subject.Target.Actor, subject.Target.UID)
	}
	return nil
}
