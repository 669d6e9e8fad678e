package deploy_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"holdco/app"
	"holdco/config"
)

// loadCompose loads docker-compose.yml as `docker compose` does, with the
// variables of env (the committed .env.example when nil).
func loadCompose(t *testing.T, envFile string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"}, cli.WithWorkingDirectory(".."),
		cli.WithEnvFiles(envFile), cli.WithDotEnv, cli.WithName("holdco"))
	require.NoError(t, err)
	return opts.LoadProject(context.Background())
}

func holdcoServices(p *types.Project) map[string]types.ServiceConfig {
	out := map[string]types.ServiceConfig{}
	for name, s := range p.Services {
		if s.Image == "holdco:local" {
			out[name] = s
		}
	}
	return out
}

// TestComposeFile loads docker-compose.yml with compose-spec's loader and
// checks the deployment it describes.
func TestComposeFile(t *testing.T) {
	p, err := loadCompose(t, "../.env.example")
	require.NoError(t, err)
	holdco := holdcoServices(p)

	t.Run("every role runs, api and worker twice, after a one-shot migrate", func(t *testing.T) {
		roles := map[app.Role]string{}
		for name, s := range holdco {
			switch {
			case slices.Equal(s.Command, []string{"migrate"}):
				assert.Equal(t, "no", s.Restart, "migrate runs once")
				continue
			case slices.Equal(s.Command, []string{"worker"}):
				roles[app.RoleWorker] = name
			case len(s.Command) == 3 && s.Command[0] == "serve" && s.Command[1] == "--roles":
				rs, err := app.ParseRoles(s.Command[2])
				require.NoError(t, err)
				require.Len(t, rs, 1, "one role per service: %s", name)
				roles[rs[0]] = name
			default:
				t.Errorf("service %s runs %q", name, s.Command)
				continue
			}
			assert.Equal(t, types.ServiceConditionCompletedSuccessfully, s.DependsOn["migrate"].Condition, "%s waits for migrate", name)
		}
		for _, r := range app.AllRoles {
			assert.Contains(t, roles, r, "role %s has a service", r)
		}
		for _, r := range []app.Role{app.RoleAPI, app.RoleWorker} {
			s := p.Services[roles[r]]
			require.NotNil(t, s.Deploy, r)
			require.NotNil(t, s.Deploy.Replicas, r)
			assert.Equal(t, 2, *s.Deploy.Replicas, r)
		}
	})

	t.Run("holdco services set only settings config.Settings has", func(t *testing.T) {
		known := map[string]bool{}
		for _, s := range config.Settings {
			known[s.Var] = true
		}
		for name, s := range holdco {
			require.NotEmpty(t, s.Environment, name)
			for v := range s.Environment {
				assert.True(t, known[v], "%s sets %s, which config.Settings does not have", name, v)
			}
			// What a cluster needs: shared database, Temporal, blobs and
			// metrics; never the embedded server's own files.
			for _, v := range []string{"DATABASE_URL", "TEMPORAL_ADDRESS", "HOLDCO_BLOB_BACKEND", "HOLDCO_METRICS_ADDR", "HOLDCO_SECRET_KEY"} {
				require.NotNil(t, s.Environment[v], "%s sets %s", name, v)
				assert.NotEmpty(t, *s.Environment[v], "%s sets %s", name, v)
			}
			assert.True(t, strings.HasPrefix(*s.Environment["DATABASE_URL"], "postgres://"), name)
			assert.Equal(t, "s3", *s.Environment["HOLDCO_BLOB_BACKEND"], name)
		}
		// The environment is a configuration holdco accepts.
		env := map[string]string{}
		for v, val := range holdco["worker"].Environment {
			env[v] = *val
		}
		_, err := config.Load(func(k string) string { return env[k] })
		assert.NoError(t, err)
	})

	t.Run("secrets come from .env and are required", func(t *testing.T) {
		empty := t.TempDir() + "/empty.env"
		require.NoError(t, os.WriteFile(empty, nil, 0o600))
		_, err := loadCompose(t, empty)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "POSTGRES_PASSWORD")
		raw, err := os.ReadFile("../docker-compose.yml")
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "change-me", "no secret value in the compose file")
		ignore, err := os.ReadFile("../.gitignore")
		require.NoError(t, err)
		assert.Contains(t, strings.Fields(string(ignore)), ".env", ".env is never committed")
	})

	t.Run("published host ports do not collide", func(t *testing.T) {
		seen := map[string]string{}
		for name, s := range p.Services {
			for _, port := range s.Ports {
				if port.Published == "" {
					continue
				}
				if s.Deploy != nil && s.Deploy.Replicas != nil && *s.Deploy.Replicas > 1 {
					t.Errorf("%s has %d replicas and publishes port %s: they would collide", name, *s.Deploy.Replicas, port.Published)
				}
				key := port.Published + "/" + port.Protocol
				if other, ok := seen[key]; ok {
					t.Errorf("host port %s published by %s and %s", key, other, name)
				}
				seen[key] = name
			}
		}
		assert.NotEmpty(t, seen)
	})

	t.Run("long-running services have health checks and wait for healthy dependencies", func(t *testing.T) {
		for name, s := range p.Services {
			if s.Restart == "no" {
				continue // one-shot: waited for with service_completed_successfully
			}
			require.NotNil(t, s.HealthCheck, "%s has a health check", name)
			assert.False(t, s.HealthCheck.Disable, name)
			assert.NotEmpty(t, s.HealthCheck.Test, name)
			for dep, d := range s.DependsOn {
				if p.Services[dep].Restart == "no" {
					assert.Equal(t, types.ServiceConditionCompletedSuccessfully, d.Condition, "%s → %s", name, dep)
				} else {
					assert.Equal(t, types.ServiceConditionHealthy, d.Condition, "%s → %s", name, dep)
				}
			}
		}
		for name, s := range holdco {
			if s.Restart == "no" {
				continue
			}
			assert.Equal(t, "/holdco", s.HealthCheck.Test[1], name)
			assert.Contains(t, s.HealthCheck.Test, "healthcheck", name)
		}
	})

	t.Run("Temporal is the official images on the same Postgres, with holdco's search attributes", func(t *testing.T) {
		temporal := p.Services["temporal"]
		assert.True(t, strings.HasPrefix(temporal.Image, "temporalio/auto-setup:"), temporal.Image)
		assert.Equal(t, "postgres", *temporal.Environment["POSTGRES_SEEDS"])
		setup := p.Services["temporal-setup"]
		assert.True(t, strings.HasPrefix(setup.Image, "temporalio/admin-tools:"))
		script := strings.Join(setup.Command, " ")
		for _, attr := range []string{"CompanyId", "ConglomerateId", "ProvisioningState"} {
			assert.Contains(t, script, attr)
		}
		assert.True(t, strings.HasPrefix(p.Services["temporal-ui"].Image, "temporalio/ui:"))
		assert.Contains(t, strings.Join(p.Services["minio-setup"].Command, " "), "mc mb")
	})

	t.Run("Prometheus scrapes every holdco service's metrics listener", func(t *testing.T) {
		raw, err := os.ReadFile("prometheus/prometheus.yml")
		require.NoError(t, err)
		var cfg struct {
			ScrapeConfigs []struct {
				JobName      string `yaml:"job_name"`
				DNSSDConfigs []struct {
					Names []string `yaml:"names"`
					Port  int      `yaml:"port"`
				} `yaml:"dns_sd_configs"`
			} `yaml:"scrape_configs"`
		}
		require.NoError(t, yaml.Unmarshal(raw, &cfg))
		scraped := map[string]int{}
		for _, sc := range cfg.ScrapeConfigs {
			for _, d := range sc.DNSSDConfigs {
				for _, n := range d.Names {
					scraped[n] = d.Port
				}
			}
		}
		for name, s := range holdco {
			if s.Restart == "no" {
				continue
			}
			assert.Equal(t, ":"+portString(scraped[name]), *s.Environment["HOLDCO_METRICS_ADDR"], "Prometheus scrapes %s", name)
		}
	})
}

func portString(p int) string {
	if p == 0 {
		return "(not scraped)"
	}
	return strconv.Itoa(p)
}

// TestGrafanaDashboard: the provisioned dashboard is valid JSON and asks
// only for holdco's and Temporal's metrics.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana/dashboards/holdco.json")
	require.NoError(t, err)
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	require.NotEmpty(t, d.Panels)
	metric := regexp.MustCompile(`\b(holdco|temporal)_[a-z_]+`)
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			assert.True(t, metric.MatchString(tg.Expr) || strings.HasPrefix(tg.Expr, "up{"), "%s: %s", p.Title, tg.Expr)
		}
	}
}
