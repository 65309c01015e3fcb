package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
)

// ComposeResult is what `manifest-check compose` prints.
type ComposeResult struct {
	File string `json:"file"`
	// Project is the loaded model after interpolation and normalisation, as
	// `docker compose config --format json` prints it; null when the file does not load.
	Project json.RawMessage `json:"project"`
	// Variables are the ${VAR} references in the file with their defaults.
	Variables []ComposeVariable `json:"variables"`
	// Problems lists load, schema and interpolation failures; empty means valid.
	Problems []Problem `json:"problems"`
}

// ComposeVariable is one ${NAME...} reference in the file.
type ComposeVariable struct {
	Name       string `json:"name"`
	HasDefault bool   `json:"hasDefault"`
	Default    string `json:"default"`
	Required   bool   `json:"required"`
}

// checkCompose loads file the way `docker compose` does (compose-go is its loader), with only
// the given KEY=VALUE pairs as the environment, so the result does not depend on the caller's
// shell, and with every profile enabled, so no service escapes the checks.
func checkCompose(file string, env []string) ComposeResult {
	result := ComposeResult{File: file, Project: json.RawMessage("null"), Variables: []ComposeVariable{}, Problems: []Problem{}}
	absFile, err := filepath.Abs(file)
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: err.Error()})
		return result
	}
	result.File = absFile
	content, err := os.ReadFile(absFile)
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: err.Error()})
		return result
	}

	environment := types.Mapping{}
	for _, pair := range env {
		key, value, ok := strings.Cut(pair, "=")
		if !ok {
			result.Problems = append(result.Problems, Problem{Message: fmt.Sprintf("not KEY=VALUE: %q", pair)})
			return result
		}
		environment[key] = value
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(absFile),
		ConfigFiles: []types.ConfigFile{{Filename: absFile, Content: content}},
		Environment: environment,
	}
	ctx := context.Background()

	// The raw model, before interpolation, tells which variables have defaults.
	raw, err := loader.LoadModelWithContext(ctx, details, func(o *loader.Options) {
		o.SetProjectName(loader.NormalizeProjectName(filepath.Base(details.WorkingDir)), false)
		o.SkipInterpolation = true
		o.SkipValidation = true
		o.SkipNormalization = true
		o.SkipConsistencyCheck = true
		o.SkipResolveEnvironment = true
		o.ResolvePaths = false
		o.Profiles = []string{"*"}
	})
	if err == nil {
		for _, variable := range template.ExtractVariables(raw, template.DefaultPattern) {
			hasDefault := variable.DefaultValue != ""
			result.Variables = append(result.Variables, ComposeVariable{
				Name:       variable.Name,
				HasDefault: hasDefault,
				Default:    variable.DefaultValue,
				Required:   variable.Required,
			})
			// ${X:?message} fails the load by itself and ${X:+v} is empty on purpose; a plain
			// ${X} silently becomes "" when X is unset.
			intentional := variable.Required || variable.PresenceValue != ""
			if _, set := environment[variable.Name]; !set && !hasDefault && !intentional {
				result.Problems = append(result.Problems, Problem{
					Message: fmt.Sprintf("${%s} has no default and is not set: it would be empty", variable.Name),
				})
			}
		}
		sort.Slice(result.Variables, func(i, j int) bool { return result.Variables[i].Name < result.Variables[j].Name })
	}

	project, err := loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		o.Profiles = []string{"*"}
		// As `docker compose` does: a top-level name wins, else the directory's name.
		o.SetProjectName(loader.NormalizeProjectName(filepath.Base(details.WorkingDir)), false)
	})
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: "docker compose would reject it: " + err.Error()})
		return result
	}
	serialised, err := project.MarshalJSON()
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: "cannot serialise the project: " + err.Error()})
		return result
	}
	result.Project = serialised
	return result
}
