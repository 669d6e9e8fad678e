package service

import (
	"context"

	"holdco/models"
)

// ActorOf says who an activity event recorded for this request is by: a
// company key is the company's agents, a user is a person, anything else
// (the operator, the worker) is the system.
func ActorOf(ctx context.Context) models.ActivityActor {
	p, ok := PrincipalFrom(ctx)
	switch {
	case !ok:
		return models.ActorSystem
	case p.Credential == CredentialCompanyKey:
		return models.ActorAgent
	case p.IsUser():
		return models.ActorUser
	}
	return models.ActorSystem
}
