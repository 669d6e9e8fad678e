// Package deploy holds the deployment files around docker-compose.yml
// (Prometheus, Grafana, Temporal's dynamic configuration, the nginx
// front) and their tests: the compose file is loaded with the compose
// specification's own loader and the Dockerfile with BuildKit's parser, so
// `make test` catches a broken deployment without pulling an image.
package deploy
