package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerui"
	"github.com/moby/buildkit/solver/pb"
	digest "github.com/opencontainers/go-digest"
)

// DockerfileResult is what `manifest-check dockerfile` prints.
type DockerfileResult struct {
	File string `json:"file"`
	// Target is the stage that would be built: the one asked for, else the last.
	Target string `json:"target"`
	// BuildArgs are the KEY=VALUE build arguments the file was loaded with.
	BuildArgs map[string]string `json:"buildArgs"`
	// Stages are every stage of the file, in order.
	Stages []DockerfileStage `json:"stages"`
	// BaseImages are the images (not stages) the target's stages start from, normalised
	// (docker.io/library/node:20-bookworm-slim).
	BaseImages []string `json:"baseImages"`
	// Args are the build arguments the target uses (`docker buildx build --call=outline`).
	Args []DockerfileArg `json:"args"`
	// Image is the configuration of the image the target would produce (user, environment,
	// working directory, entrypoint, command, exposed ports); null when the file does not load.
	Image json.RawMessage `json:"image"`
	// Warnings are the build checks of `docker build --check` that fail, over every stage.
	Warnings []DockerfileWarning `json:"warnings"`
	// Problems lists parse and conversion failures; empty means BuildKit would start the build.
	Problems []Problem `json:"problems"`
}

// DockerfileStage is one FROM.
type DockerfileStage struct {
	Name    string `json:"name"`
	Base    string `json:"base"`
	Default bool   `json:"default"`
}

// DockerfileArg is one ARG the target uses, with its default and the value it gets.
type DockerfileArg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Line  int    `json:"line"`
}

// DockerfileWarning is one failed build check.
type DockerfileWarning struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Line    int    `json:"line"`
}

// unresolvedBaseImages stands in for a registry: every base image resolves to an empty linux
// image, so the file is converted without network access (the images themselves are not
// checked), and the references asked for are recorded.
type unresolvedBaseImages struct {
	mu   sync.Mutex
	refs []string
}

func (r *unresolvedBaseImages) ResolveImageConfig(_ context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	r.mu.Lock()
	if !slices.Contains(r.refs, ref) {
		r.refs = append(r.refs, ref)
	}
	r.mu.Unlock()
	architecture := "amd64"
	if opt.ImageOpt != nil && opt.ImageOpt.Platform != nil {
		architecture = opt.ImageOpt.Platform.Architecture
	}
	config := fmt.Sprintf(`{"architecture":%q,"os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}}`, architecture)
	return ref, digest.FromString(ref), []byte(config), nil
}

// checkDockerfile loads file with BuildKit's Dockerfile frontend (the code `docker build` runs)
// for the given target and build arguments: it parses the file, runs the build checks, resolves
// the stages the target needs, expands the arguments and converts every instruction to LLB,
// which is everything a build does before it executes the first step.
func checkDockerfile(file string, args []string) DockerfileResult {
	result := DockerfileResult{
		File:       file,
		BuildArgs:  map[string]string{},
		Stages:     []DockerfileStage{},
		BaseImages: []string{},
		Args:       []DockerfileArg{},
		Image:      json.RawMessage("null"),
		Warnings:   []DockerfileWarning{},
		Problems:   []Problem{},
	}
	for _, arg := range args {
		if target, ok := strings.CutPrefix(arg, "--target="); ok {
			result.Target = target
			continue
		}
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			result.Problems = append(result.Problems, Problem{Message: fmt.Sprintf("not KEY=VALUE or --target=STAGE: %q", arg)})
			return result
		}
		result.BuildArgs[key] = value
	}
	if absFile, err := filepath.Abs(file); err == nil {
		result.File = absFile
	}
	content, err := os.ReadFile(result.File)
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: err.Error()})
		return result
	}

	ctx := context.Background()
	targets, err := dockerfile2llb.ListTargets(ctx, content)
	if err != nil {
		result.reject(err.Error())
		return result
	}
	for _, target := range targets.Targets {
		result.Stages = append(result.Stages, DockerfileStage{Name: target.Name, Base: target.Base, Default: target.Default})
		if target.Default && result.Target == "" {
			result.Target = target.Name
		}
	}

	// The conversion of the target records the base images it starts from.
	baseImages := &unresolvedBaseImages{}
	options := func(resolver *unresolvedBaseImages) dockerfile2llb.ConvertOpt {
		buildArgs := make(map[string]string, len(result.BuildArgs))
		for key, value := range result.BuildArgs {
			buildArgs[key] = value
		}
		sourceMap := llb.NewSourceMap(nil, filepath.Base(result.File), "Dockerfile", content)
		sourceMap.Definition = &llb.Definition{}
		return dockerfile2llb.ConvertOpt{
			Config:       dockerui.Config{BuildArgs: buildArgs, Target: result.Target},
			SourceMap:    sourceMap,
			MetaResolver: resolver,
		}
	}

	// The checks over every stage, as `docker build --check` runs them.
	lintOptions := options(&unresolvedBaseImages{})
	lintOptions.Target = ""
	lint, err := dockerfile2llb.DockerfileLint(ctx, content, lintOptions)
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: "the build checks failed to run: " + err.Error()})
	} else {
		for _, warning := range lint.Warnings {
			result.Warnings = append(result.Warnings, DockerfileWarning{
				Rule:    warning.RuleName,
				Message: warning.Detail,
				Line:    firstLine(warning.Location),
			})
		}
		if lint.Error != nil {
			result.reject(lint.Error.Message)
		}
	}

	outline, err := dockerfile2llb.Dockerfile2Outline(ctx, content, options(&unresolvedBaseImages{}))
	if err != nil {
		result.reject(err.Error())
		return result
	}
	for _, arg := range outline.Args {
		result.Args = append(result.Args, DockerfileArg{Name: arg.Name, Value: arg.Value, Line: firstLine(arg.Location)})
	}

	_, image, _, _, err := dockerfile2llb.Dockerfile2LLB(ctx, content, options(baseImages))
	if err != nil {
		result.reject(err.Error())
		return result
	}
	result.BaseImages = append(result.BaseImages, baseImages.refs...)
	slices.Sort(result.BaseImages)
	serialised, err := json.Marshal(image.Config)
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: "cannot serialise the image configuration: " + err.Error()})
		return result
	}
	result.Image = serialised
	return result
}

// reject records a reason BuildKit would refuse the file, once (the checks, the outline and the
// conversion each stop at the same first error).
func (result *DockerfileResult) reject(reason string) {
	problem := Problem{Message: "docker build would reject it: " + reason}
	if !slices.Contains(result.Problems, problem) {
		result.Problems = append(result.Problems, problem)
	}
}

func firstLine(location *pb.Location) int {
	if location == nil || len(location.Ranges) == 0 || location.Ranges[0].Start == nil {
		return 0
	}
	return int(location.Ranges[0].Start.Line)
}
