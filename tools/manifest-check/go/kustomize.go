package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Problem is one reason an object, or the whole rendering, is not acceptable.
type Problem struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Message   string `json:"message"`
}

// KustomizeResult is what `manifest-check kustomize` prints.
type KustomizeResult struct {
	// Dir is the kustomization that was rendered.
	Dir string `json:"dir"`
	// Objects are the rendered objects as kustomize emits them (before any defaulting).
	Objects []json.RawMessage `json:"objects"`
	// Problems lists rendering, decoding and validation failures; empty means valid.
	Problems []Problem `json:"problems"`
}

func checkKustomization(dir string) KustomizeResult {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		absDir = dir
	}
	result := KustomizeResult{Dir: absDir, Objects: []json.RawMessage{}, Problems: []Problem{}}

	// The same options as `kustomize build` / `kubectl kustomize`: files outside the
	// kustomization root may not be loaded, no plugins.
	kustomizer := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := kustomizer.Run(filesys.MakeFsOnDisk(), absDir)
	if err != nil {
		result.Problems = append(result.Problems, Problem{Message: "kustomize build failed: " + err.Error()})
		return result
	}

	for _, resource := range resources.Resources() {
		raw, err := resource.MarshalJSON()
		if err != nil {
			result.Problems = append(result.Problems, Problem{
				Kind:    resource.GetKind(),
				Name:    resource.GetName(),
				Message: fmt.Sprintf("cannot serialise the rendered object: %v", err),
			})
			continue
		}
		result.Objects = append(result.Objects, raw)
		for _, message := range validateObject(raw) {
			result.Problems = append(result.Problems, Problem{
				Kind:      resource.GetKind(),
				Namespace: resource.GetNamespace(),
				Name:      resource.GetName(),
				Message:   message,
			})
		}
	}
	return result
}
