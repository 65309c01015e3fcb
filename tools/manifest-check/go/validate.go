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
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	admissionregistrationvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	nodevalidation "k8s.io/kubernetes/pkg/apis/node/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
	"k8s.io/kubernetes/pkg/apis/rbac"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"
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

// validatorOf is the kindValidator that runs validate on the object as its internal type T.
func validatorOf[T runtime.Object](namespaced bool, validate func(T) field.ErrorList) kindValidator {
	return kindValidator{namespaced, func(o runtime.Object) field.ErrorList { return validate(o.(T)) }}
}

var validators = map[schema.GroupKind]kindValidator{
	{Group: "", Kind: "Namespace"}:      validatorOf(false, corevalidation.ValidateNamespace),
	{Group: "", Kind: "ConfigMap"}:      validatorOf(true, corevalidation.ValidateConfigMap),
	{Group: "", Kind: "Secret"}:         validatorOf(true, corevalidation.ValidateSecret),
	{Group: "", Kind: "Service"}:        validatorOf(true, corevalidation.ValidateServiceCreate),
	{Group: "", Kind: "ResourceQuota"}:  validatorOf(true, corevalidation.ValidateResourceQuota),
	{Group: "", Kind: "LimitRange"}:     validatorOf(true, corevalidation.ValidateLimitRange),
	{Group: "", Kind: "ServiceAccount"}: validatorOf(true, corevalidation.ValidateServiceAccount),
	{Group: "apps", Kind: "Deployment"}: validatorOf(true, func(deployment *apps.Deployment) field.ErrorList {
		opts := podutil.GetValidationOptionsFromPodTemplate(&deployment.Spec.Template, nil)
		return appsvalidation.ValidateDeployment(deployment, opts)
	}),
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: validatorOf(true, func(hpa *autoscaling.HorizontalPodAutoscaler) field.ErrorList {
		opts := autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions{
			MinReplicasLowerBound: 1,
			ScaleTargetRefValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{
				AllowInvalidAPIVersion: false, AllowEmptyAPIGroup: false,
			},
			ObjectMetricsValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{
				AllowInvalidAPIVersion: false, AllowEmptyAPIGroup: true,
			},
		}
		return autoscalingvalidation.ValidateHorizontalPodAutoscaler(hpa, opts)
	}),
	{Group: "policy", Kind: "PodDisruptionBudget"}: validatorOf(true, func(budget *policy.PodDisruptionBudget) field.ErrorList {
		opts := policyvalidation.PodDisruptionBudgetValidationOptions{AllowInvalidLabelValueInSelector: false}
		return policyvalidation.ValidatePodDisruptionBudget(budget, opts)
	}),
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: validatorOf(true, func(policy *networking.NetworkPolicy) field.ErrorList {
		return networkingvalidation.ValidateNetworkPolicy(policy, networkingvalidation.ValidationOptionsForNetworking(policy, nil))
	}),
	{Group: "batch", Kind: "Job"}: validatorOf(true, func(job *batch.Job) field.ErrorList {
		prepareJobForCreate(job)
		opts := batchvalidation.JobValidationOptions{
			PodValidationOptions:  podutil.GetValidationOptionsFromPodTemplate(&job.Spec.Template, nil),
			RequirePrefixedLabels: true,
		}
		return batchvalidation.ValidateJob(job, opts)
	}),
	{Group: "networking.k8s.io", Kind: "Ingress"}:             validatorOf(true, networkingvalidation.ValidateIngressCreate),
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:              validatorOf(false, nodevalidation.ValidateRuntimeClass),
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        validatorOf(true, rbacvalidation.ValidateRole),
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: validatorOf(true, rbacvalidation.ValidateRoleBinding),
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: validatorOf(false, func(role *rbac.ClusterRole) field.ErrorList {
		return rbacvalidation.ValidateClusterRole(role, rbacvalidation.ClusterRoleValidationOptions{AllowInvalidLabelValueInSelector: false})
	}),
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: validatorOf(false, rbacvalidation.ValidateClusterRoleBinding),
	// Its CEL expressions are compiled and type-checked against the admission request, as on create.
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}: validatorOf(false, func(p *admissionregistration.ValidatingAdmissionPolicy) field.ErrorList {
		return admissionregistrationvalidation.ValidateValidatingAdmissionPolicy(p)
	}),
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: validatorOf(false, func(b *admissionregistration.ValidatingAdmissionPolicyBinding) field.ErrorList {
		return admissionregistrationvalidation.ValidateValidatingAdmissionPolicyBinding(b)
	}),
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
