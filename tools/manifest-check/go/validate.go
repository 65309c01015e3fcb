package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
)

// The scheme the API server itself uses (legacyscheme) with the groups these manifests use.
// Strict: an unknown field, a duplicate field or a value of the wrong type is an error, as it
// is for `kubectl apply --validate=strict` (the default).
var strictDecoder = serializer.NewCodecFactory(legacyscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// kindValidator validates an internal (unversioned) object as the API server's registry
// strategy does on create, with the same options.
type kindValidator struct {
	namespaced bool
	validate   func(runtime.Object) field.ErrorList
}

var validators = map[schema.GroupKind]kindValidator{
	{Group: "", Kind: "Namespace"}: {false, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateNamespace(o.(*core.Namespace))
	}},
	{Group: "", Kind: "ConfigMap"}: {true, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateConfigMap(o.(*core.ConfigMap))
	}},
	{Group: "", Kind: "Secret"}: {true, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateSecret(o.(*core.Secret))
	}},
	{Group: "", Kind: "Service"}: {true, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateServiceCreate(o.(*core.Service))
	}},
	{Group: "", Kind: "ResourceQuota"}: {true, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateResourceQuota(o.(*core.ResourceQuota))
	}},
	{Group: "", Kind: "LimitRange"}: {true, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateLimitRange(o.(*core.LimitRange))
	}},
	{Group: "", Kind: "ServiceAccount"}: {true, func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateServiceAccount(o.(*core.ServiceAccount))
	}},
	{Group: "apps", Kind: "Deployment"}: {true, func(o runtime.Object) field.ErrorList {
		deployment := o.(*apps.Deployment)
		opts := podutil.GetValidationOptionsFromPodTemplate(&deployment.Spec.Template, nil)
		return appsvalidation.ValidateDeployment(deployment, opts)
	}},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {true, func(o runtime.Object) field.ErrorList {
		opts := autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions{
			MinReplicasLowerBound: 1,
			ScaleTargetRefValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{
				AllowInvalidAPIVersion: false, AllowEmptyAPIGroup: false,
			},
			ObjectMetricsValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{
				AllowInvalidAPIVersion: false, AllowEmptyAPIGroup: true,
			},
		}
		return autoscalingvalidation.ValidateHorizontalPodAutoscaler(o.(*autoscaling.HorizontalPodAutoscaler), opts)
	}},
	{Group: "policy", Kind: "PodDisruptionBudget"}: {true, func(o runtime.Object) field.ErrorList {
		opts := policyvalidation.PodDisruptionBudgetValidationOptions{AllowInvalidLabelValueInSelector: false}
		return policyvalidation.ValidatePodDisruptionBudget(o.(*policy.PodDisruptionBudget), opts)
	}},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: {true, func(o runtime.Object) field.ErrorList {
		policy := o.(*networking.NetworkPolicy)
		return networkingvalidation.ValidateNetworkPolicy(policy, networkingvalidation.ValidationOptionsForNetworking(policy, nil))
	}},
	{Group: "batch", Kind: "Job"}: {true, func(o runtime.Object) field.ErrorList {
		job := o.(*batch.Job)
		prepareJobForCreate(job)
		opts := batchvalidation.JobValidationOptions{
			PodValidationOptions:  podutil.GetValidationOptionsFromPodTemplate(&job.Spec.Template, nil),
			RequirePrefixedLabels: true,
		}
		return batchvalidation.ValidateJob(job, opts)
	}},
	{Group: "networking.k8s.io", Kind: "Ingress"}: {true, func(o runtime.Object) field.ErrorList {
		return networkingvalidation.ValidateIngressCreate(o.(*networking.Ingress))
	}},
}

// validateObject decodes one JSON object strictly into its typed struct, applies the API
// server's defaults, converts it to the internal version and runs the API server's validation.
// It returns one message per problem.
func validateObject(raw []byte) []string {
	versioned, gvk, err := strictDecoder.Decode(raw, nil, nil)
	if err != nil {
		// Strict decoding errors come with the decoded object; either way the object is rejected.
		return []string{fmt.Sprintf("does not decode into its Kubernetes type: %v", err)}
	}
	validator, known := validators[gvk.GroupKind()]
	if !known {
		return []string{fmt.Sprintf("%s is not a kind this checker validates; add it to validators", gvk)}
	}

	legacyscheme.Scheme.Default(versioned)
	internal, err := legacyscheme.Scheme.ConvertToVersion(versioned, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return []string{fmt.Sprintf("cannot convert to the internal version: %v", err)}
	}

	var problems []string
	seen := map[string]bool{}
	report := func(errs field.ErrorList) {
		for _, e := range errs {
			if message := e.Error(); !seen[message] {
				seen[message] = true
				problems = append(problems, message)
			}
		}
	}
	// What every create goes through (k8s.io/apiserver/pkg/registry/rest.BeforeCreate)...
	accessor, err := meta.Accessor(internal)
	if err != nil {
		return []string{fmt.Sprintf("has no object metadata: %v", err)}
	}
	report(apimachineryvalidation.ValidateObjectMetaAccessor(accessor, validator.namespaced, path.ValidatePathSegmentName, field.NewPath("metadata")))
	// ...then the kind's own validation.
	report(validator.validate(internal))
	return problems
}

// prepareJobForCreate does to a Job what the API server does on create before validating it:
// a UID, and (unless the selector is manual) the generated selector and pod labels. It follows
// generateSelector in k8s.io/kubernetes/pkg/registry/batch/job, which cannot be linked here
// without the API server's storage (etcd) packages.
func prepareJobForCreate(job *batch.Job) {
	job.UID = "00000000-0000-0000-0000-000000000000"
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	for _, label := range []string{batch.LegacyJobNameLabel, batch.JobNameLabel} {
		if _, found := job.Spec.Template.Labels[label]; !found {
			job.Spec.Template.Labels[label] = job.Name
		}
	}
	for _, label := range []string{batch.LegacyControllerUidLabel, batch.ControllerUidLabel} {
		if _, found := job.Spec.Template.Labels[label]; !found {
			job.Spec.Template.Labels[label] = string(job.UID)
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, found := job.Spec.Selector.MatchLabels[batch.ControllerUidLabel]; !found {
		job.Spec.Selector.MatchLabels[batch.ControllerUidLabel] = string(job.UID)
	}
}
